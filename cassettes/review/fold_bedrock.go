package review

import (
	"encoding/json"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
)

// bedrockFolder folds a Bedrock Converse answer: a ConverseResponse, or
// the events of ConverseStream (messageStart, contentBlockStart,
// contentBlockDelta, contentBlockStop, messageStop, metadata), content
// blocks by contentBlockIndex as the AWS SDK's stream readers present
// them: text deltas appended to text, toolUse input deltas to the tool
// call's input. An error answer's type is its X-Amzn-Errortype header
// (or the body's __type), a stream's the exception's type.
type bedrockFolder struct {
	m      *Message
	blocks map[int]*bedrockBlock
}

type bedrockBlock struct {
	text  strings.Builder
	call  *ToolCall
	input strings.Builder
}

func newBedrockFolder(m *Message, r cassettes.Recorded) *bedrockFolder {
	f := &bedrockFolder{m: m, blocks: map[int]*bedrockBlock{}}
	if t := r.ResponseHeaders.Get("X-Amzn-Errortype"); t != "" {
		t, _, _ = strings.Cut(t, ":")
		f.m.ErrorType = t
	}
	return f
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
	Message  string `json:"message"`
	Message2 string `json:"Message"`
	Type     string `json:"__type"`
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
	if d.exception {
		f.m.ErrorType, f.m.ErrorMessage = d.event, w.Message
		if f.m.ErrorMessage == "" {
			f.m.ErrorMessage = w.Message2
		}
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
		if f.m.ErrorType != "" || w.Type != "" {
			if f.m.ErrorType == "" {
				f.m.ErrorType = w.Type[strings.LastIndex(w.Type, "#")+1:]
			}
			f.m.ErrorMessage = w.Message
			if f.m.ErrorMessage == "" {
				f.m.ErrorMessage = w.Message2
			}
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
