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
	Tools    []functionTool  `json:"tools"`
}

// functionTool is a function tool as OpenAI's chat completions and
// Ollama's chat declare it.
type functionTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
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

// readOllamaRequest reads an Ollama request into v; for a body that is not
// one, or one whose model() is "", it answers Ollama's error and returns
// false.
func readOllamaRequest(w http.ResponseWriter, r *http.Request, v any, model func() string) bool {
	body, ok := readBody(w, r, ollamaError)
	if !ok {
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeJSON(w, http.StatusBadRequest, ollamaError(0, err.Error()))
		return false
	}
	if model() == "" {
		writeJSON(w, http.StatusBadRequest, ollamaError(0, "model is required"))
		return false
	}
	return true
}

func (s *Server) serveOllamaChat(w http.ResponseWriter, r *http.Request) {
	var req ollamaChatRequest
	if !readOllamaRequest(w, r, &req, func() string { return req.Model }) {
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
	var text, called string // called: the tool call's name and arguments
	var mode Mode
	switch {
	case len(results) > 0:
		text = "fakellm: " + strings.Join(results, "; ")
	case len(req.Tools) > 0:
		f := req.Tools[0].Function
		args := toolArguments(f.Parameters, user)
		called = f.Name + args
		msg["tool_calls"] = []any{map[string]any{
			"id":       "call_fake_" + requestID("/api/chat", req.Model, system, all, f.Name),
			"function": map[string]any{"index": 0, "name": f.Name, "arguments": json.RawMessage(args)},
		}}
	default:
		rep := s.answer(user)
		if rep.status != http.StatusOK {
			writeJSON(w, rep.status, ollamaError(rep.status, rep.text))
			return
		}
		text, mode = rep.text, rep.mode
	}
	in, out := tokens(system)+tokens(all), tokens(text)+tokens(called)
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
	var lines []any
	chunk := func(m map[string]any) {
		lines = append(lines, map[string]any{"model": req.Model, "created_at": ollamaCreatedAt, "message": m, "done": false})
	}
	if calls, ok := msg["tool_calls"]; ok {
		chunk(map[string]any{"role": "assistant", "content": "", "tool_calls": calls})
	}
	for _, piece := range chunks(text, s.cfg.ChunkSize) {
		chunk(map[string]any{"role": "assistant", "content": piece})
	}
	if mode != Truncated {
		lines = append(lines, done)
	}
	writeNDJSON(w, lines)
}

// writeNDJSON answers application/x-ndjson: each of lines as JSON, and a
// newline after each.
func writeNDJSON(w http.ResponseWriter, lines []any) {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(marshal(l))
		b.WriteByte('\n')
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}

// ollamaGenerateRequest is the part of an Ollama POST /api/generate
// request the server reads. Stream is true when absent, as in Ollama.
type ollamaGenerateRequest struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	System string `json:"system"`
	Stream *bool  `json:"stream"`
}

// serveOllamaGenerate answers POST /api/generate: the answer to "prompt"
// (with "system"), streamed as NDJSON unless "stream" is false, as
// /api/chat answers but in "response" rather than "message"; an empty
// prompt only loads the model, as Ollama answers it: done, done_reason
// "load".
func (s *Server) serveOllamaGenerate(w http.ResponseWriter, r *http.Request) {
	var req ollamaGenerateRequest
	if !readOllamaRequest(w, r, &req, func() string { return req.Model }) {
		return
	}
	if st, ok := markedStatus(req.Prompt); ok {
		writeJSON(w, st, ollamaError(st, fmt.Sprintf("fakellm: the prompt asks for status %d", st)))
		return
	}
	streamed := req.Stream == nil || *req.Stream
	done := map[string]any{"model": req.Model, "created_at": ollamaCreatedAt, "response": "", "done": true}
	if req.Prompt == "" {
		done["done_reason"] = "load"
		if streamed {
			writeNDJSON(w, []any{done})
		} else {
			writeJSONType(w, "application/json; charset=utf-8", done)
		}
		return
	}
	rep := s.answer(req.Prompt)
	if rep.status != http.StatusOK {
		writeJSON(w, rep.status, ollamaError(rep.status, rep.text))
		return
	}
	done["done_reason"] = "stop"
	done["prompt_eval_count"] = tokens(req.System) + tokens(req.Prompt)
	done["eval_count"] = tokens(rep.text)
	if !streamed {
		done["response"] = rep.text
		writeJSONType(w, "application/json; charset=utf-8", done)
		return
	}
	var lines []any
	for _, piece := range chunks(rep.text, s.cfg.ChunkSize) {
		lines = append(lines, map[string]any{"model": req.Model, "created_at": ollamaCreatedAt, "response": piece, "done": false})
	}
	if rep.mode != Truncated {
		lines = append(lines, done)
	}
	writeNDJSON(w, lines)
}

// ollamaEmbedRequest is the part of an Ollama POST /api/embed request the
// server reads: "input" is a string or an array of strings.
type ollamaEmbedRequest struct {
	Model      string          `json:"model"`
	Input      json.RawMessage `json:"input"`
	Dimensions int             `json:"dimensions"`
}

// serveOllamaEmbed answers POST /api/embed: one vector, Embed(text, dims),
// per input, dims "dimensions" or Config.EmbeddingDims.
func (s *Server) serveOllamaEmbed(w http.ResponseWriter, r *http.Request) {
	var req ollamaEmbedRequest
	if !readOllamaRequest(w, r, &req, func() string { return req.Model }) {
		return
	}
	var inputs []string
	if raw := bytes.TrimSpace(req.Input); len(raw) > 0 && raw[0] == '"' {
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			writeJSON(w, http.StatusBadRequest, ollamaError(0, err.Error()))
			return
		}
		inputs = []string{one}
	} else if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &inputs); err != nil {
			writeJSON(w, http.StatusBadRequest, ollamaError(0, "invalid input type"))
			return
		}
	}
	dims := s.cfg.EmbeddingDims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	if dims > 4096 {
		writeJSON(w, http.StatusBadRequest, ollamaError(0, "dimensions: at most 4096"))
		return
	}
	embeddings := make([][]float64, len(inputs))
	var total int64
	for i, text := range inputs {
		if st, ok := markedStatus(text); ok {
			writeJSON(w, st, ollamaError(st, fmt.Sprintf("fakellm: the input asks for status %d", st)))
			return
		}
		embeddings[i] = Embed(text, dims)
		total += tokens(text)
	}
	writeJSONType(w, "application/json; charset=utf-8", map[string]any{"model": req.Model, "embeddings": embeddings, "prompt_eval_count": total})
}

func writeJSONType(w http.ResponseWriter, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(marshal(v))
}
