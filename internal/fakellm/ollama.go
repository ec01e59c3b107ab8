package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ollamaChatRequest is the part of an Ollama POST /api/chat request the
// server reads. Stream is true when absent, as in Ollama.
type ollamaChatRequest struct {
	Model    string          `json:"model"`
	Messages []ollamaMessage `json:"messages"`
	Stream   *bool           `json:"stream"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

type ollamaMessage struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	ToolName string `json:"tool_name"`
}

// ollamaError is Ollama's error body.
func ollamaError(_ int, msg string) any { return map[string]any{"error": msg} }

// ollamaCreatedAt is the created_at of every answer: Ollama stamps the
// wall clock, the fake the epoch.
const ollamaCreatedAt = "1970-01-01T00:00:00Z"

func (s *Server) serveOllamaChat(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, ollamaError)
	if !ok {
		return
	}
	var req ollamaChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, ollamaError(0, err.Error()))
		return
	}
	if req.Model == "" {
		writeJSON(w, http.StatusBadRequest, ollamaError(0, "model is required"))
		return
	}
	var system, user, all string
	var results []string
	for _, m := range req.Messages {
		switch strings.ToLower(m.Role) {
		case "system":
			system += m.Content
		case "user":
			user = m.Content
		case "tool":
			name := m.ToolName
			if name == "" {
				name = "tool"
			}
			results = append(results, name+" returned "+m.Content)
		case "assistant":
		default:
			writeJSON(w, http.StatusBadRequest, ollamaError(0, fmt.Sprintf("invalid role: %s", m.Role)))
			return
		}
		all += m.Content
	}
	if st, ok := markedStatus(user); ok {
		writeJSON(w, st, ollamaError(st, fmt.Sprintf("fakellm: the prompt asks for status %d", st)))
		return
	}
	msg := map[string]any{"role": "assistant", "content": ""}
	var text string
	var mode Mode
	switch {
	case len(results) > 0:
		text = "fakellm: " + strings.Join(results, "; ")
	case len(req.Tools) > 0:
		f := req.Tools[0].Function
		msg["tool_calls"] = []any{map[string]any{
			"id":       "call_fake_" + requestID("/api/chat", req.Model, system, all, f.Name),
			"function": map[string]any{"index": 0, "name": f.Name, "arguments": json.RawMessage(toolArguments(f.Parameters, user))},
		}}
	default:
		rep := s.answer(user)
		if rep.status != http.StatusOK {
			writeJSON(w, rep.status, ollamaError(rep.status, rep.text))
			return
		}
		text, mode = rep.text, rep.mode
	}
	in, out := tokens(system)+tokens(all), tokens(text)
	done := map[string]any{
		"model": req.Model, "created_at": ollamaCreatedAt, "message": map[string]any{"role": "assistant", "content": ""},
		"done": true, "done_reason": "stop", "prompt_eval_count": in, "eval_count": out,
	}
	if req.Stream != nil && !*req.Stream {
		msg["content"] = text
		done["message"] = msg
		writeJSONType(w, "application/json; charset=utf-8", done)
		return
	}
	var b bytes.Buffer
	line := func(v any) {
		b.Write(marshal(v))
		b.WriteByte('\n')
	}
	chunk := func(m map[string]any) {
		line(map[string]any{"model": req.Model, "created_at": ollamaCreatedAt, "message": m, "done": false})
	}
	if calls, ok := msg["tool_calls"]; ok {
		chunk(map[string]any{"role": "assistant", "content": "", "tool_calls": calls})
	}
	for _, piece := range chunks(text, s.cfg.ChunkSize) {
		chunk(map[string]any{"role": "assistant", "content": piece})
	}
	if mode != Truncated {
		line(done)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}

func writeJSONType(w http.ResponseWriter, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(marshal(v))
}
