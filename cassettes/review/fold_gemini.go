package review

import (
	"encoding/json"
	"strings"
)

// geminiFolder folds a Gemini generateContent answer: one
// GenerateContentResponse, or the chunks of streamGenerateContent (as
// server-sent events or a JSON array). As the genai SDK's Text does, the
// text is candidate 0's text parts that are not thoughts, in order over
// the chunks; function calls are candidate 0's functionCall parts; the
// finish reason and usage are the last chunk's that has them.
type geminiFolder struct {
	m    *Message
	text strings.Builder
}

type geminiWire struct {
	Candidates []struct {
		Index   int `json:"index"`
		Content struct {
			Parts []struct {
				Text         string `json:"text"`
				Thought      bool   `json:"thought"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
		ToolUsePromptTokenCount int64 `json:"toolUsePromptTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion   string `json:"modelVersion"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error *struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Status  string          `json:"status"`
	} `json:"error"`
}

func (f *geminiFolder) add(d doc) {
	var w geminiWire
	if json.Unmarshal(d.data, &w) != nil {
		return
	}
	if w.ModelVersion != "" {
		f.m.Model = w.ModelVersion
	}
	if e := w.Error; e != nil {
		f.m.ErrorType, f.m.ErrorMessage = e.Status, e.Message
		if f.m.ErrorType == "" {
			f.m.ErrorType = scalar(e.Code)
		}
	}
	if p := w.PromptFeedback; p != nil && p.BlockReason != "" {
		f.m.StopReason = p.BlockReason
	}
	if u := w.UsageMetadata; u != nil {
		// promptTokenCount includes the cached tokens; thoughts are billed
		// as output.
		f.m.Usage = Usage{Input: u.PromptTokenCount - u.CachedContentTokenCount + u.ToolUsePromptTokenCount,
			Output: u.CandidatesTokenCount + u.ThoughtsTokenCount, CacheRead: u.CachedContentTokenCount}
	}
	for _, c := range w.Candidates {
		if c.Index != 0 {
			continue
		}
		if c.FinishReason != "" {
			f.m.StopReason = c.FinishReason
		}
		for _, p := range c.Content.Parts {
			if fc := p.FunctionCall; fc != nil {
				f.m.ToolCalls = append(f.m.ToolCalls, ToolCall{ID: fc.ID, Name: fc.Name, Arguments: string(fc.Args)})
			} else if !p.Thought {
				f.text.WriteString(p.Text)
			}
		}
	}
}

func (f *geminiFolder) finish() { f.m.Text = f.text.String() }
