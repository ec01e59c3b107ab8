package review

import (
	"encoding/json"
	"strings"
)

// responsesFolder folds an OpenAI Responses API answer: a response
// object, or the typed events of its stream. Output items are kept by
// output_index; text and argument deltas are appended to their item; a
// whole item (output_item.done) or a whole response (response.completed,
// .incomplete, .failed) replaces what the deltas built.
type responsesFolder struct {
	m     *Message
	items map[int]*respItem
}

type respItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"` // custom_tool_call
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	text strings.Builder
	args strings.Builder // argument or input deltas
}

type respWire struct {
	Type       string                   `json:"type"`
	Model      string                   `json:"model"`
	Status     string                   `json:"status"`
	Output     []*respItem              `json:"output"`
	Usage      *respUsage               `json:"usage"`
	Incomplete *struct{ Reason string } `json:"incomplete_details"`
	Error      json.RawMessage          `json:"error"`
	// Stream events
	Response    *respWire       `json:"response"`
	OutputIndex int             `json:"output_index"`
	Item        *respItem       `json:"item"`
	Delta       string          `json:"delta"`
	Code        json.RawMessage `json:"code"`
	Message     string          `json:"message"`
}

type respUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (f *responsesFolder) add(d doc) {
	var w respWire
	if json.Unmarshal(d.data, &w) != nil {
		return
	}
	event := d.event
	if event == "" {
		event = w.Type
	}
	switch event {
	case "response.output_item.added":
		if it := w.Item; it != nil {
			// What an added item holds so far, the deltas repeat.
			it.Content, it.Arguments, it.Input = nil, "", ""
			f.items[w.OutputIndex] = it
		}
	case "response.output_item.done":
		if w.Item != nil {
			f.items[w.OutputIndex] = w.Item
		}
	case "response.output_text.delta":
		if it := f.items[w.OutputIndex]; it != nil {
			it.text.WriteString(w.Delta)
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if it := f.items[w.OutputIndex]; it != nil {
			it.args.WriteString(w.Delta)
		}
	case "error":
		f.m.ErrorType, f.m.ErrorMessage = scalar(w.Code), w.Message
	case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
		if w.Response != nil {
			f.response(w.Response)
		}
	case "":
		f.response(&w) // a response body, or an error body
	}
}

// response folds a whole response object.
func (f *responsesFolder) response(w *respWire) {
	if w.Model != "" {
		f.m.Model = w.Model
	}
	f.m.StopReason = w.Status
	if w.Incomplete != nil && w.Incomplete.Reason != "" {
		f.m.StopReason = w.Incomplete.Reason
	}
	if u := w.Usage; u != nil {
		f.m.Usage = Usage{Input: u.InputTokens, Output: u.OutputTokens}
		if d := u.InputTokensDetails; d != nil {
			f.m.Usage.Input -= d.CachedTokens
			f.m.Usage.CacheRead = d.CachedTokens
		}
	}
	f.error(w.Error)
	if len(w.Output) > 0 {
		clear(f.items)
		for i, it := range w.Output {
			if it != nil {
				f.items[i] = it
			}
		}
	}
}

func (f *responsesFolder) error(raw json.RawMessage) {
	var e struct {
		Type    string `json:"type"`
		Code    any    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || (e.Type == "" && e.Code == nil && e.Message == "") {
		return
	}
	f.m.ErrorType, f.m.ErrorMessage = e.Type, e.Message
	if s, ok := e.Code.(string); ok && f.m.ErrorType == "" {
		f.m.ErrorType = s
	}
}

func (f *responsesFolder) finish() {
	var text strings.Builder
	for _, i := range sortedKeys(f.items) {
		it := f.items[i]
		switch it.Type {
		case "message":
			if len(it.Content) == 0 {
				text.WriteString(it.text.String())
				continue
			}
			for _, c := range it.Content {
				if c.Type == "output_text" {
					text.WriteString(c.Text)
				}
			}
		case "function_call", "custom_tool_call":
			args := it.Arguments + it.Input
			if args == "" {
				args = it.args.String()
			}
			f.m.ToolCalls = append(f.m.ToolCalls, ToolCall{ID: it.CallID, Name: it.Name, Arguments: args})
		}
	}
	f.m.Text = text.String()
}
