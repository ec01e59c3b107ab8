package fakellm

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"strings"
)

// bedrockRequest is the part of a Bedrock Converse request the server
// reads.
type bedrockRequest struct {
	Messages        []bedrockMessage             `json:"messages"`
	System          []map[string]json.RawMessage `json:"system"`
	InferenceConfig struct {
		MaxTokens *int64 `json:"maxTokens"`
	} `json:"inferenceConfig"`
	ToolConfig struct {
		Tools []struct {
			ToolSpec *struct {
				Name        string `json:"name"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
	} `json:"toolConfig"`
}

type bedrockMessage struct {
	Role    string                       `json:"role"`
	Content []map[string]json.RawMessage `json:"content"`
}

// bedrockErrorType is the exception Bedrock names for a status.
func bedrockErrorType(status int) string {
	switch status {
	case 400:
		return "ValidationException"
	case 403:
		return "AccessDeniedException"
	case 404:
		return "ResourceNotFoundException"
	case 408:
		return "ModelTimeoutException"
	case 424:
		return "ModelErrorException"
	case 429:
		return "ThrottlingException"
	case 503:
		return "ServiceUnavailableException"
	}
	return "InternalServerException"
}

// writeBedrockError writes an AWS REST-JSON error: the exception in
// X-Amzn-Errortype and {"message": ...} as the body.
func writeBedrockError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	writeJSON(w, status, map[string]any{"message": msg})
}

// readBedrockRequest reads a request to .../model/{modelId}/<plain> or
// <stream>: its body, the model id and whether it asks for the stream.
// For a request it refuses (a body it cannot read, a credential other
// than Config.APIKey) it answers the error and returns false.
func (s *Server) readBedrockRequest(w http.ResponseWriter, r *http.Request, plain, stream string) ([]byte, string, bool, bool) {
	body, ok := readBody(w, r, func(_ int, msg string) any { return map[string]any{"message": msg} })
	if !ok {
		return nil, "", false, false
	}
	if key := s.cfg.APIKey; key != "" && !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+key+"/") &&
		r.Header.Get("Authorization") != "Bearer "+key {
		writeBedrockError(w, http.StatusForbidden, "UnrecognizedClientException", "The security token included in the request is invalid.")
		return nil, "", false, false
	}
	streamed := strings.HasSuffix(r.URL.Path, stream)
	model := strings.TrimSuffix(strings.TrimSuffix(r.URL.Path, stream), plain)
	return body, model[strings.LastIndex(model, "/model/")+len("/model/"):], streamed, true
}

// serveBedrock answers POST .../model/{modelId}/converse (JSON) and
// /converse-stream (application/vnd.amazon.eventstream).
func (s *Server) serveBedrock(w http.ResponseWriter, r *http.Request) {
	body, model, stream, ok := s.readBedrockRequest(w, r, "/converse", "/converse-stream")
	if !ok {
		return
	}
	var req bedrockRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeBedrockError(w, http.StatusBadRequest, "SerializationException", "fakellm: request body is not a Converse request: "+err.Error())
		return
	}
	if msg := req.invalid(); msg != "" {
		writeBedrockError(w, http.StatusBadRequest, "ValidationException", msg)
		return
	}
	system := geminiPartsText(req.System, "toolResult")
	user := geminiPartsText(req.Messages[len(req.Messages)-1].Content, "toolResult")
	var maxTokens int64
	if m := req.InferenceConfig.MaxTokens; m != nil {
		maxTokens = *m
	}
	id := requestID("bedrock", model, fmt.Sprint(maxTokens), system, user)
	w.Header().Set("X-Amzn-Requestid", uuidOf(id))
	var tools []declaredTool
	for _, t := range req.ToolConfig.Tools {
		if t.ToolSpec != nil {
			tools = append(tools, declaredTool{name: t.ToolSpec.Name, schema: t.ToolSpec.InputSchema.JSON})
		}
	}
	in := tokens(system) + tokens(user)
	var out conversed
	if call, ok := calledTool(tools, user); ok {
		out = conversed{call: &call, callID: "tooluse_" + id, stop: "tool_use", outTokens: tokens(string(marshal(call.args)))}
	} else {
		rep := s.answer(user)
		if rep.status != http.StatusOK {
			writeBedrockError(w, rep.status, bedrockErrorType(rep.status), rep.text)
			return
		}
		text, cut := truncate(rep.text, maxTokens)
		out = conversed{text: text, stop: "end_turn", outTokens: tokens(text), truncated: rep.mode == Truncated}
		if cut {
			out.stop = "max_tokens"
		}
	}
	usage := map[string]any{"inputTokens": in, "outputTokens": out.outTokens, "totalTokens": in + out.outTokens}
	metrics := map[string]any{"latencyMs": 0}
	if !stream {
		var content []any
		switch {
		case out.call != nil:
			content = []any{map[string]any{"toolUse": map[string]any{"toolUseId": out.callID, "name": out.call.name, "input": out.call.args}}}
		case out.text != "":
			content = []any{map[string]any{"text": out.text}}
		default:
			content = []any{}
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
			"stopReason": out.stop, "usage": usage, "metrics": metrics,
		})
		return
	}
	var b []byte
	ev := func(typ string, payload any) { b = appendEventFrame(b, typ, marshal(payload)) }
	ev("messageStart", map[string]any{"role": "assistant"})
	switch {
	case out.call != nil:
		ev("contentBlockStart", map[string]any{"contentBlockIndex": 0, "start": map[string]any{"toolUse": map[string]any{"toolUseId": out.callID, "name": out.call.name}}})
		for _, c := range chunks(string(marshal(out.call.args)), s.cfg.ChunkSize) {
			ev("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"toolUse": map[string]any{"input": c}}})
		}
		ev("contentBlockStop", map[string]any{"contentBlockIndex": 0})
	case out.text != "":
		for _, c := range chunks(out.text, s.cfg.ChunkSize) {
			ev("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"text": c}})
		}
		if out.truncated {
			break
		}
		ev("contentBlockStop", map[string]any{"contentBlockIndex": 0})
	}
	if !out.truncated {
		ev("messageStop", map[string]any{"stopReason": out.stop})
		ev("metadata", map[string]any{"usage": usage, "metrics": metrics})
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// conversed is the answer to a Converse request: text or a tool call.
type conversed struct {
	text      string
	call      *toolCall
	callID    string
	stop      string
	outTokens int64
	truncated bool
}

// invalid returns Bedrock's ValidationException message for a request it
// refuses, or "".
func (req *bedrockRequest) invalid() string {
	if len(req.Messages) == 0 || req.Messages[0].Role != "user" {
		return "A conversation must start with a user message. Try again with a conversation that starts with a user message."
	}
	for i, m := range req.Messages {
		for j, c := range m.Content {
			if raw, ok := c["text"]; ok {
				var s string
				if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == "" {
					return fmt.Sprintf("The text field in the ContentBlock object at messages.%d.content.%d is blank. Add text to the text field, and try again.", i, j)
				}
			}
		}
	}
	return ""
}

// uuidOf formats the first 16 bytes of a hex digest as a UUID.
func uuidOf(hexID string) string {
	h := (hexID + strings.Repeat("0", 32))[:32]
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// appendEventFrame appends one message of the AWS event stream encoding
// (application/vnd.amazon.eventstream) to dst: an event of type
// eventType with a JSON payload. The message is
//
//	total length (uint32) | headers length (uint32) | prelude CRC (uint32)
//	headers | payload | message CRC (uint32)
//
// big-endian, each CRC the IEEE CRC-32 of every byte before it (the
// prelude's of the first 8 bytes), and the headers ":event-type",
// ":content-type" (application/json) and ":message-type" (event), each
// a 1-byte name length, the name, the type 7 (string), a 2-byte value
// length and the value.
func appendEventFrame(dst []byte, eventType string, payload []byte) []byte {
	var h []byte
	for _, kv := range [][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}} {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7)
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(12+len(h)+len(payload)+4))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(h)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:start+8]))
	dst = append(dst, h...)
	dst = append(dst, payload...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

// bedrockInvokeRequest is an InvokeModel body for an Anthropic model: a
// Messages request with "anthropic_version" in the body and the model in
// the URL.
type bedrockInvokeRequest struct {
	messagesRequest
	AnthropicVersion *string         `json:"anthropic_version"`
	ModelKey         json.RawMessage `json:"model"`
	StreamKey        json.RawMessage `json:"stream"`
}

// serveBedrockInvoke answers POST .../model/{modelId}/invoke (the model's
// answer as JSON) and /invoke-with-response-stream (an
// application/vnd.amazon.eventstream of "chunk" events whose payload is
// {"bytes": the base64 of one event of the model's own stream}), for
// Anthropic models: the body is a Messages request that names
// anthropic_version and neither model nor stream, answered as
// /v1/messages answers it, without ping events, message_stop carrying
// amazon-bedrock-invocationMetrics.
func (s *Server) serveBedrockInvoke(w http.ResponseWriter, r *http.Request) {
	body, model, stream, ok := s.readBedrockRequest(w, r, "/invoke", "/invoke-with-response-stream")
	if !ok {
		return
	}
	if !strings.Contains(model, "anthropic.") {
		writeBedrockError(w, http.StatusBadRequest, "ValidationException", "fakellm: InvokeModel answers Anthropic models (anthropic.*) only, not "+model)
		return
	}
	malformed := func(why string) {
		writeBedrockError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: #: "+why+", please reformat your input and try again.")
	}
	var req bedrockInvokeRequest
	switch err := json.Unmarshal(body, &req); {
	case err != nil:
		malformed("the body is not a JSON object")
		return
	case req.AnthropicVersion == nil:
		malformed("required key [anthropic_version] not found")
		return
	case req.ModelKey != nil:
		malformed("extraneous key [model] is not permitted")
		return
	case req.StreamKey != nil:
		malformed("extraneous key [stream] is not permitted")
		return
	}
	req.Model = model
	t := s.messagesTurn(&req.messagesRequest, "bedrock-invoke")
	if t.id != "" {
		w.Header().Set("X-Amzn-Requestid", uuidOf(t.id))
	}
	if t.status != http.StatusOK {
		writeBedrockError(w, t.status, bedrockErrorType(t.status), t.errMsg)
		return
	}
	in, out := t.msg.Usage.InputTokens, t.msg.Usage.OutputTokens
	if !stream {
		w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", fmt.Sprint(in))
		w.Header().Set("X-Amzn-Bedrock-Output-Token-Count", fmt.Sprint(out))
		w.Header().Set("X-Amzn-Bedrock-Invocation-Latency", "0")
		writeJSON(w, http.StatusOK, t.msg)
		return
	}
	var b []byte
	for _, e := range s.streamEvents(t, false) {
		if e.name == "message_stop" {
			e.data.(map[string]any)["amazon-bedrock-invocationMetrics"] = map[string]any{
				"inputTokenCount": in, "outputTokenCount": out, "invocationLatency": 0, "firstByteLatency": 0}
		}
		b = appendEventFrame(b, "chunk", marshal(map[string]any{"bytes": marshal(e.data)}))
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.Header().Set("X-Amzn-Bedrock-Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
