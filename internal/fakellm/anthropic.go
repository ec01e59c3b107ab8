package fakellm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxRequestBody bounds a request body the server reads.
const maxRequestBody = 32 << 20

// messagesRequest is the part of an Anthropic Messages request the server
// reads. Content and System may be a string or an array of blocks.
type messagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens *int64          `json:"max_tokens"`
	Messages  []anthropicMsg  `json:"messages"`
	System    json.RawMessage `json:"system"`
	Stream    bool            `json:"stream"`
}

type anthropicMsg struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blockText returns the text of a string or of an array of text blocks.
func blockText(raw json.RawMessage) (string, error) { return typedText(raw, "text") }

// typedText returns the text of a string or of an array of blocks, taking
// the text of the blocks whose type is one of types.
func typedText(raw json.RawMessage, types ...string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, bl := range blocks {
		if slices.Contains(types, bl.Type) {
			b.WriteString(bl.Text)
		}
	}
	return b.String(), nil
}

// Anthropic error types by status, as the API names them.
func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func anthropicError(status int, msg string) any {
	return map[string]any{
		"type":  "error",
		"error": map[string]any{"type": anthropicErrorType(status), "message": msg},
	}
}

// requestID derives a deterministic ID from the parts of a request that
// decide its answer (not the stream flag: JSON and SSE share IDs).
func requestID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// tokens is the server's deterministic token count: ceil(bytes/4).
func tokens(s string) int64 { return int64((len(s) + 3) / 4) }

// truncate cuts text to the max_tokens budget (4 bytes a token) at a rune
// boundary and reports whether it cut.
func truncate(text string, maxTokens int64) (string, bool) {
	if maxTokens <= 0 || tokens(text) <= maxTokens {
		return text, false
	}
	cut := int(maxTokens * 4)
	if cut > len(text) {
		return text, false
	}
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut], true
}

func readBody(w http.ResponseWriter, r *http.Request, errBody func(int, string) any) ([]byte, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, errBody(http.StatusMethodNotAllowed, "fakellm: "+r.URL.Path+" takes POST, got "+r.Method))
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errBody(http.StatusBadRequest, "fakellm: read body: "+err.Error()))
		return nil, false
	}
	if len(body) > maxRequestBody {
		writeJSON(w, http.StatusRequestEntityTooLarge, errBody(http.StatusRequestEntityTooLarge, "fakellm: request body exceeds 32 MiB"))
		return nil, false
	}
	return body, true
}

func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, anthropicError)
	if !ok {
		return
	}
	if s.cfg.APIKey != "" && r.Header.Get("X-Api-Key") != s.cfg.APIKey && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
		writeJSON(w, http.StatusUnauthorized, anthropicError(http.StatusUnauthorized, "invalid x-api-key"))
		return
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, anthropicError(http.StatusBadRequest, "fakellm: request body is not a messages request: "+err.Error()))
		return
	}
	if req.Model == "" {
		writeJSON(w, http.StatusBadRequest, anthropicError(http.StatusBadRequest, "model: Field required"))
		return
	}
	t := s.messagesTurn(&req, "/v1/messages")
	if t.id != "" {
		w.Header().Set("Request-Id", "req_fake_"+t.id)
	}
	if t.status != http.StatusOK {
		writeJSON(w, t.status, anthropicError(t.status, t.errMsg))
		return
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, t.msg)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	var b bytes.Buffer
	for _, e := range s.streamEvents(t, true) {
		event(&b, e.name, e.data)
	}
	_, _ = w.Write(b.Bytes())
}

// messagesTurn is the answer to one Messages request: the message and its
// text, or an error status and message.
type messagesTurn struct {
	msg    anthropicMessage
	text   string
	cut    bool // the stream stops after the text deltas (Truncated)
	id     string
	status int
	errMsg string
}

// messagesTurn answers req (its model already checked), its ID digesting
// route and the parts of req that decide the answer.
func (s *Server) messagesTurn(req *messagesRequest, route string) messagesTurn {
	bad := func(msg string) messagesTurn { return messagesTurn{status: http.StatusBadRequest, errMsg: msg} }
	switch {
	case req.MaxTokens == nil:
		return bad("max_tokens: Field required")
	case len(req.Messages) == 0:
		return bad("messages: at least one message is required")
	}
	system, err := blockText(req.System)
	if err != nil {
		return bad("system: " + err.Error())
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "user" {
		return bad("messages: the last message must have role \"user\"")
	}
	user, err := blockText(last.Content)
	if err != nil {
		return bad("messages.content: " + err.Error())
	}
	rep := s.answer(user)
	id := requestID(route, req.Model, fmt.Sprint(*req.MaxTokens), system, user)
	if rep.status != http.StatusOK {
		return messagesTurn{id: id, status: rep.status, errMsg: rep.text}
	}
	text, cut := truncate(rep.text, *req.MaxTokens)
	stop := "end_turn"
	if cut {
		stop = "max_tokens"
	}
	msg := anthropicMessage{
		ID:         "msg_fake_" + id,
		Type:       "message",
		Role:       "assistant",
		Model:      req.Model,
		Content:    []textBlock{},
		StopReason: &stop,
		Usage:      anthropicUsage{InputTokens: tokens(system) + tokens(user), OutputTokens: tokens(text)},
	}
	if text != "" {
		msg.Content = []textBlock{{Type: "text", Text: text}}
	}
	return messagesTurn{msg: msg, text: text, cut: rep.mode == Truncated, id: id, status: http.StatusOK}
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

type anthropicMessage struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []textBlock    `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        anthropicUsage `json:"usage"`
}

// namedEvent is one event of a Messages stream: its type and its data.
type namedEvent struct {
	name string
	data any
}

// streamEvents are t's message as the Messages API streams it:
// message_start, content_block_start, ping (withPing), the text in
// content_block_delta pieces, content_block_stop, message_delta and
// message_stop. With t.cut the stream ends after the deltas.
func (s *Server) streamEvents(t messagesTurn, withPing bool) []namedEvent {
	var out []namedEvent
	add := func(name string, data map[string]any) {
		data["type"] = name
		out = append(out, namedEvent{name, data})
	}
	start := t.msg
	start.Content = []textBlock{}
	start.StopReason = nil
	start.Usage.OutputTokens = 1
	add("message_start", map[string]any{"message": start})
	if t.text != "" {
		add("content_block_start", map[string]any{"index": 0, "content_block": textBlock{Type: "text", Text: ""}})
	}
	if withPing {
		add("ping", map[string]any{})
	}
	if t.text != "" {
		for _, chunk := range chunks(t.text, s.cfg.ChunkSize) {
			add("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": chunk}})
		}
		if t.cut {
			return out
		}
		add("content_block_stop", map[string]any{"index": 0})
	}
	add("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": *t.msg.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": t.msg.Usage.OutputTokens},
	})
	add("message_stop", map[string]any{})
	return out
}

// event appends one server-sent event: "event: name", "data: json", blank.
func event(b *bytes.Buffer, name string, data any) {
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(marshal(data))
	b.WriteString("\n\n")
}

// chunks splits text into pieces of about n bytes without splitting a
// UTF-8 sequence.
func chunks(text string, n int) []string {
	var out []string
	for len(text) > 0 {
		cut := min(n, len(text))
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

// marshal encodes v as compact JSON without HTML escaping. Map keys are
// sorted by encoding/json, so the bytes are deterministic.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("fakellm: marshal: " + err.Error()) // only server-built values reach here
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(marshal(v))
}
