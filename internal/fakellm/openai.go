package fakellm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"unicode"

	"crypto/sha256"
)

func openAIErrorType(status int) string {
	switch {
	case status == 401:
		return "invalid_api_key"
	case status == 429:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func openAIError(status int, msg string) any {
	return map[string]any{
		"error": map[string]any{"message": msg, "type": openAIErrorType(status), "param": nil, "code": nil},
	}
}

type chatRequest struct {
	Model     string `json:"model"`
	MaxTokens *int64 `json:"max_tokens"`
	Messages  []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools         []functionTool  `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatToolCall is the fake's call of a function tool in a chat
// completion.
type chatToolCall struct{ id, name, arguments string }

func (s *Server) checkBearer(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
		writeJSON(w, http.StatusUnauthorized, openAIError(http.StatusUnauthorized, "Incorrect API key provided."))
		return false
	}
	return true
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, openAIError)
	if !ok || !s.checkBearer(w, r) {
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "fakellm: request body is not a chat completion request: "+err.Error()))
		return
	}
	switch {
	case req.Model == "":
		writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "you must provide a model parameter"))
		return
	case len(req.Messages) == 0:
		writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "messages: at least one message is required"))
		return
	}
	var system, user string
	var results []string // of the tool messages after the last user message
	called := map[string]string{}
	for _, m := range req.Messages {
		text, err := blockText(m.Content)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "messages.content: "+err.Error()))
			return
		}
		switch m.Role {
		case "system", "developer":
			system += text
		case "user":
			user, results = text, nil
		case "assistant":
			for _, c := range m.ToolCalls {
				called[c.ID] = c.Function.Name
			}
		case "tool":
			name, ok := called[m.ToolCallID]
			if !ok {
				writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest,
					fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (tool_call_id %q)", m.ToolCallID)))
				return
			}
			results = append(results, name+" returned "+text)
		}
	}
	var maxTokens int64
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	idParts := []string{"/v1/chat/completions", req.Model, fmt.Sprint(maxTokens), system, user}
	if len(req.Tools) > 0 || len(results) > 0 {
		idParts = append(idParts, strings.Join(results, "\n"))
		for _, t := range req.Tools {
			idParts = append(idParts, t.Function.Name)
		}
	}
	id := requestID(idParts...)
	var call *chatToolCall
	rep := reply{status: http.StatusOK, text: "fakellm: " + strings.Join(results, "; ")}
	switch {
	case len(results) > 0:
	case len(req.Tools) > 0 && string(bytes.TrimSpace(req.ToolChoice)) != `"none"`:
		f := req.Tools[0].Function
		call = &chatToolCall{id: "call_fake_" + id, name: f.Name, arguments: toolArguments(f.Parameters, user)}
	default:
		rep = s.answer(user)
	}
	if rep.status != http.StatusOK {
		writeJSON(w, rep.status, openAIError(rep.status, rep.text))
		return
	}
	var text string
	finish := "stop"
	if call != nil {
		finish = "tool_calls"
	} else {
		var cut bool
		if text, cut = truncate(rep.text, maxTokens); cut {
			finish = "length"
		}
	}
	out := tokens(text)
	if call != nil {
		out = tokens(call.name) + tokens(call.arguments)
	}
	in := tokens(system) + tokens(user) + tokens(strings.Join(results, ""))
	usage := map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
	if req.Stream {
		s.writeChatStream(w, chatChunk{id: "chatcmpl-fake-" + id, model: req.Model}, text, call, finish,
			rep.mode == Truncated, req.StreamOptions != nil && req.StreamOptions.IncludeUsage, usage)
		return
	}
	message := map[string]any{"role": "assistant", "content": text}
	if call != nil {
		message["content"] = nil
		message["tool_calls"] = []any{call.json(nil)}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      "chatcmpl-fake-" + id,
		"object":  "chat.completion",
		"created": 0,
		"model":   req.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       message,
			"finish_reason": finish,
		}},
		"usage": usage,
	})
}

// json is the call as a message's tool_calls entry; with arguments set,
// as the first delta of a stream, which names the call and gives those
// arguments (the rest follow in deltas of their own).
func (c *chatToolCall) json(arguments *string) map[string]any {
	args := c.arguments
	if arguments != nil {
		args = *arguments
	}
	m := map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": args}}
	if arguments != nil {
		m["index"] = 0
	}
	return m
}

// chatChunk is what every chunk of one streamed completion repeats.
type chatChunk struct{ id, model string }

func (c chatChunk) data(choices []any, usage any) map[string]any {
	m := map[string]any{"id": c.id, "object": "chat.completion.chunk", "created": 0, "model": c.model, "choices": choices}
	if usage != nil {
		m["usage"] = usage
	}
	return m
}

// writeChatStream answers a streaming chat completion: a chunk with the
// assistant role, the text in Config.ChunkSize-byte pieces, a chunk with
// the finish reason, the usage chunk when asked for, and "data: [DONE]".
// A tool call is streamed instead of text: a delta naming it with empty
// arguments, then its arguments in Config.ChunkSize-byte pieces.
// cut stops after the text chunks.
func (s *Server) writeChatStream(w http.ResponseWriter, c chatChunk, text string, call *chatToolCall, finish string, cut, withUsage bool, usage any) {
	var b bytes.Buffer
	send := func(v any) {
		b.WriteString("data: ")
		b.Write(marshal(v))
		b.WriteString("\n\n")
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
	}
	if call != nil {
		empty := ""
		send(c.data(choice(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call.json(&empty)}}, nil), nil))
		for _, piece := range chunks(call.arguments, s.cfg.ChunkSize) {
			send(c.data(choice(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": piece}}}}, nil), nil))
		}
	} else {
		send(c.data(choice(map[string]any{"role": "assistant", "content": ""}, nil), nil))
	}
	for _, piece := range chunks(text, s.cfg.ChunkSize) {
		send(c.data(choice(map[string]any{"content": piece}, nil), nil))
	}
	if !cut {
		send(c.data(choice(map[string]any{}, finish), nil))
		if withUsage {
			send(c.data([]any{}, usage))
		}
		b.WriteString("data: [DONE]\n\n")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
}

type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     int             `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, openAIError)
	if !ok || !s.checkBearer(w, r) {
		return
	}
	var req embeddingsRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "fakellm: request body is not an embeddings request: "+err.Error()))
		return
	}
	var inputs []string
	raw := bytes.TrimSpace(req.Input)
	switch {
	case req.Model == "":
		writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "you must provide a model parameter"))
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float":
		writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "fakellm: encoding_format must be \"float\""))
		return
	case len(raw) > 0 && raw[0] == '"':
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "input: "+err.Error()))
			return
		}
		inputs = []string{one}
	default:
		if err := json.Unmarshal(raw, &inputs); err != nil || len(inputs) == 0 {
			writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "input: must be a string or a non-empty array of strings"))
			return
		}
	}
	dims := s.cfg.EmbeddingDims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	if dims > 4096 {
		writeJSON(w, http.StatusBadRequest, openAIError(http.StatusBadRequest, "dimensions: at most 4096"))
		return
	}
	if s.cfg.Mode == HTTPError {
		writeJSON(w, s.cfg.Status, openAIError(s.cfg.Status, fmt.Sprintf("fakellm: configured to fail with status %d", s.cfg.Status)))
		return
	}
	data := make([]any, len(inputs))
	var total int64
	for i, text := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Embed(text, dims)}
		total += tokens(text)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]any{"prompt_tokens": total, "total_tokens": total},
	})
}

// Embed returns the vector /v1/embeddings gives for text: feature hashing
// of the lower-cased words (letters and digits) of text into dims buckets
// with a sign bit, L2-normalised; all zeros for text without words. Texts
// sharing words get similar vectors. The result depends only on text and
// dims, on every platform.
func Embed(text string, dims int) []float64 {
	v := make([]float64, dims)
	if dims <= 0 {
		return v
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, word := range words {
		sum := sha256.Sum256([]byte(word))
		h := binary.BigEndian.Uint64(sum[:8])
		sign := 1.0
		if h&1 == 1 {
			sign = -1.0
		}
		v[int((h>>1)%uint64(dims))] += sign
	}
	var norm float64
	for _, x := range v {
		norm += float64(x * x)
	}
	if norm == 0 {
		return v
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float64(v[i] / norm)
	}
	return v
}
