package review

import (
	"encoding/json"
	"strings"
)

// ollamaFolder folds an Ollama /api/chat or /api/generate answer: one
// ChatResponse (GenerateResponse), or its NDJSON stream of them. As
// Ollama's Go client hands them to its callback: message.content (or
// response) is appended, each chunk's message.tool_calls are whole calls,
// appended in order; the chunk with done true carries done_reason,
// prompt_eval_count and eval_count. An /api/embed answer has no text: its
// prompt_eval_count is the input. An error is the string
// {"error": "..."}, of type "error".
type ollamaFolder struct {
	m    *Message
	text strings.Builder
}

type ollamaWire struct {
	Model   string `json:"model"`
	Message *struct {
		Content   string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Response        string          `json:"response"`
	Embeddings      json.RawMessage `json:"embeddings"`
	Done            bool            `json:"done"`
	DoneReason      string          `json:"done_reason"`
	PromptEvalCount int64           `json:"prompt_eval_count"`
	EvalCount       int64           `json:"eval_count"`
	Error           json.RawMessage `json:"error"`
}

func (f *ollamaFolder) add(d doc) {
	var w ollamaWire
	if json.Unmarshal(d.data, &w) != nil {
		return
	}
	if w.Model != "" {
		f.m.Model = w.Model
	}
	if msg := scalar(w.Error); msg != "" {
		f.m.ErrorType, f.m.ErrorMessage = "error", msg
	}
	if m := w.Message; m != nil {
		f.text.WriteString(m.Content)
		for _, tc := range m.ToolCalls {
			f.m.ToolCalls = append(f.m.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: string(tc.Function.Arguments)})
		}
	}
	f.text.WriteString(w.Response)
	if w.DoneReason != "" {
		f.m.StopReason = w.DoneReason
	}
	if w.Done || w.Embeddings != nil {
		f.m.Usage = Usage{Input: w.PromptEvalCount, Output: w.EvalCount}
	}
}

func (f *ollamaFolder) finish() { f.m.Text = f.text.String() }
