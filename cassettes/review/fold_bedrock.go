package review

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
)

// bedrockFolder folds a Bedrock Converse answer: a ConverseResponse, or
// the events of ConverseStream (messageStart, contentBlockStart,
// contentBlockDelta, contentBlockStop, messageStop, metadata), content
// blocks by contentBlockIndex as the AWS SDK's stream readers present
// them: text deltas appended to text, toolUse input deltas to the tool
// call's input. An error body's type is its __type (see awsError for
// the X-Amzn-Errortype header and a stream's exceptions).
type bedrockFolder struct {
	m      *Message
	blocks map[int]*bedrockBlock
}

type bedrockBlock struct {
	text  strings.Builder
	call  *ToolCall
	input strings.Builder
}

type bedrockToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type bedrockUsage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadInputTokens"`
	CacheWriteTokens int64 `json:"cacheWriteInputTokens"`
}

type bedrockWire struct {
	// ConverseResponse
	Output *struct {
		Message struct {
			Content []struct {
				Text    *string         `json:"text"`
				ToolUse *bedrockToolUse `json:"toolUse"`
			} `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string        `json:"stopReason"`
	Usage      *bedrockUsage `json:"usage"`
	// Errors
	Type string `json:"__type"`
	// Stream events
	ContentBlockIndex int `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *bedrockToolUse `json:"toolUse"`
	} `json:"start"`
	Delta *struct {
		Text    *string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
	} `json:"delta"`
}

func (f *bedrockFolder) add(d doc) {
	var w bedrockWire
	if json.Unmarshal(d.data, &w) != nil {
		return
	}
	if w.StopReason != "" {
		f.m.StopReason = w.StopReason
	}
	if u := w.Usage; u != nil {
		f.m.Usage = Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens}
	}
	switch d.event {
	case "contentBlockStart":
		if w.Start != nil && w.Start.ToolUse != nil {
			tu := w.Start.ToolUse
			f.block(w.ContentBlockIndex).call = &ToolCall{ID: tu.ToolUseID, Name: tu.Name}
		}
	case "contentBlockDelta":
		if w.Delta == nil {
			return
		}
		b := f.block(w.ContentBlockIndex)
		if w.Delta.Text != nil {
			b.text.WriteString(*w.Delta.Text)
		}
		if w.Delta.ToolUse != nil {
			b.input.WriteString(w.Delta.ToolUse.Input)
		}
	case "":
		if w.Output != nil {
			for i, c := range w.Output.Message.Content {
				b := f.block(i)
				if c.Text != nil {
					b.text.WriteString(*c.Text)
				}
				if tu := c.ToolUse; tu != nil {
					b.call = &ToolCall{ID: tu.ToolUseID, Name: tu.Name}
					b.input.Write(tu.Input)
				}
			}
		}
		if w.Type != "" {
			f.m.ErrorType, f.m.ErrorMessage = w.Type[strings.LastIndex(w.Type, "#")+1:], awsMessage(d.data)
		}
	}
}

func (f *bedrockFolder) block(i int) *bedrockBlock {
	b := f.blocks[i]
	if b == nil {
		b = &bedrockBlock{}
		f.blocks[i] = b
	}
	return b
}

func (f *bedrockFolder) finish() {
	var text strings.Builder
	for _, i := range sortedKeys(f.blocks) {
		b := f.blocks[i]
		text.WriteString(b.text.String())
		if b.call != nil {
			b.call.Arguments = b.input.String()
			f.m.ToolCalls = append(f.m.ToolCalls, *b.call)
		}
	}
	f.m.Text = text.String()
}

// awsError folds what AWS says of an error in any answer it serves
// (Converse, or a model's own body through InvokeModel): an event-stream
// exception or error message d (type and message), or, after the
// documents, an X-Amzn-Errortype header ("Type:namespace") with the body's
// message.
func awsError(m *Message, r cassettes.Recorded, d *doc) {
	if d != nil {
		m.ErrorType, m.ErrorMessage = d.event, awsMessage(d.data)
		return
	}
	if t := r.ResponseHeaders.Get("X-Amzn-Errortype"); t != "" {
		m.ErrorType, _, _ = strings.Cut(t, ":")
		if m.ErrorMessage == "" {
			m.ErrorMessage = awsMessage([]byte(r.ResponseBody))
		}
	}
}

// awsMessage is the message of an AWS error document: "message" or
// "Message".
func awsMessage(data []byte) string {
	var e struct {
		Lower string `json:"message"`
		Upper string `json:"Message"`
	}
	json.Unmarshal(data, &e)
	return cmp.Or(e.Lower, e.Upper)
}
