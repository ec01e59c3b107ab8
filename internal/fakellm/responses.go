package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// responsesRequest is the part of an OpenAI Responses API request the
// server reads. Input is a string or an array of input items.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	MaxOutputTokens *int64          `json:"max_output_tokens"`
	Stream          bool            `json:"stream"`
	Tools           []responsesTool `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	Metadata        json.RawMessage `json:"metadata"`
}

type responsesTool struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
}

// responsesItem is one input item: a message (type "message" or absent,
// with a role), a function_call or a function_call_output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// responsesError is the Responses API's error body: the chat-completions
// shape, with the parameter and an error code.
func responsesError(status int, msg, param, code string) any {
	e := map[string]any{"message": msg, "type": openAIErrorType(status), "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	return map[string]any{"error": e}
}

// partsText returns the text of a string or of an array of content parts
// (input_text, output_text or text).
func partsText(raw json.RawMessage) (string, error) {
	return typedText(raw, "input_text", "output_text", "text")
}

// markedStatus finds a FAKELLM-HTTP-nnn marker anywhere in text, so a
// prompt that is not the pipeline's can still ask for an error.
func markedStatus(text string) (int, bool) {
	up := strings.ToUpper(text)
	i := strings.Index(up, MarkerHTTPPrefix)
	if i < 0 || len(up) < i+len(MarkerHTTPPrefix)+3 {
		return 0, false
	}
	code, err := strconv.Atoi(up[i+len(MarkerHTTPPrefix) : i+len(MarkerHTTPPrefix)+3])
	if err != nil || code < 400 || code > 599 {
		return 0, false
	}
	return code, true
}

// toolArguments is the fake's call of a tool: an object with one value
// per property of the tool's JSON schema, in name order: the prompt for a
// string, its word count for an integer or number, true for a boolean,
// null otherwise.
func toolArguments(schema json.RawMessage, prompt string) string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s) // a schema without properties gets {}
	args := map[string]any{}
	for name, p := range s.Properties {
		var typ string
		_ = json.Unmarshal(p.Type, &typ)
		switch typ {
		case "string":
			args[name] = prompt
		case "integer", "number":
			args[name] = len(strings.Fields(prompt))
		case "boolean":
			args[name] = true
		default:
			args[name] = nil
		}
	}
	return string(marshal(args))
}

// responsesTurn is what the server decided for one Responses request.
type responsesTurn struct {
	text     string // the answer, when call is nil
	call     *responsesCall
	mode     Mode
	in, out  int64
	cut      bool
	maxToks  int64
	baseID   string
	model    string
	instr    string
	metadata json.RawMessage
}

type responsesCall struct{ name, arguments string }

func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, openAIError)
	if !ok || !s.checkBearer(w, r) {
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, responsesError(http.StatusBadRequest, "fakellm: request body is not a Responses API request: "+err.Error(), "", ""))
		return
	}
	bad := func(msg, param, code string) {
		writeJSON(w, http.StatusBadRequest, responsesError(http.StatusBadRequest, msg, param, code))
	}
	if req.Model == "" {
		bad("Missing required parameter: 'model'.", "model", "missing_required_parameter")
		return
	}
	if req.MaxOutputTokens != nil && *req.MaxOutputTokens < 16 {
		bad(fmt.Sprintf("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got %d instead.", *req.MaxOutputTokens),
			"max_output_tokens", "integer_below_min_value")
		return
	}
	var items []responsesItem
	if raw := bytes.TrimSpace(req.Input); len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			bad("Invalid 'input': "+err.Error(), "input", "invalid_type")
			return
		}
		items = []responsesItem{{Role: "user", Content: raw}}
	} else if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 {
		bad("Invalid 'input': expected a string or a non-empty array of input items.", "input", "invalid_type")
		return
	}
	t := responsesTurn{model: req.Model, instr: req.Instructions, metadata: req.Metadata}
	if req.MaxOutputTokens != nil {
		t.maxToks = *req.MaxOutputTokens
	}
	var user, all string
	callNames := map[string]string{}
	var outputs []string
	for i, it := range items {
		switch it.Type {
		case "", "message":
			text, err := partsText(it.Content)
			if err != nil {
				bad(fmt.Sprintf("Invalid 'input[%d].content': %v", i, err), fmt.Sprintf("input[%d].content", i), "invalid_type")
				return
			}
			switch it.Role {
			case "system", "developer":
				t.instr += text
			case "user":
				user = text
			}
			all += text
		case "function_call":
			callNames[it.CallID] = it.Name
			all += it.Arguments
		case "function_call_output":
			out, err := partsText(it.Output)
			if err != nil {
				bad(fmt.Sprintf("Invalid 'input[%d].output': %v", i, err), fmt.Sprintf("input[%d].output", i), "invalid_type")
				return
			}
			name := callNames[it.CallID]
			if name == "" {
				name = it.CallID
			}
			outputs = append(outputs, name+" returned "+out)
			all += out
		default:
			bad(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'message', 'function_call' and 'function_call_output'.", it.Type),
				fmt.Sprintf("input[%d].type", i), "invalid_value")
			return
		}
	}
	t.baseID = requestID("/v1/responses", req.Model, fmt.Sprint(t.maxToks), t.instr, string(canonicalOrRaw(req.Input)), string(canonicalOrRaw(toolsJSON(req.Tools))))
	t.in = tokens(t.instr) + tokens(all)
	if st, ok := markedStatus(user); ok {
		writeJSON(w, st, responsesError(st, fmt.Sprintf("fakellm: the prompt asks for status %d", st), "", openAIErrorType(st)))
		return
	}
	var none bool
	if tc := bytes.TrimSpace(req.ToolChoice); string(tc) == `"none"` {
		none = true
	}
	fn := slices.IndexFunc(req.Tools, func(t responsesTool) bool { return t.Type == "function" })
	switch {
	case len(outputs) > 0:
		t.text = "fakellm: " + strings.Join(outputs, "; ")
	case fn >= 0 && !none:
		t.call = &responsesCall{name: req.Tools[fn].Name, arguments: toolArguments(req.Tools[fn].Parameters, user)}
	default:
		rep := s.answer(user)
		if rep.status != http.StatusOK {
			writeJSON(w, rep.status, responsesError(rep.status, rep.text, "", openAIErrorType(rep.status)))
			return
		}
		t.text, t.mode = rep.text, rep.mode
	}
	if t.call == nil {
		t.text, t.cut = truncate(t.text, t.maxToks)
		t.out = tokens(t.text)
	} else {
		t.out = tokens(t.call.arguments)
	}
	w.Header().Set("X-Request-Id", "req_fake_"+t.baseID)
	if req.Stream {
		s.writeResponsesStream(w, t)
		return
	}
	writeJSON(w, http.StatusOK, t.response("completed", true))
}

// toolsJSON re-encodes the tools as the server read them.
func toolsJSON(tools []responsesTool) []byte { return marshal(tools) }

// canonicalOrRaw returns raw compacted, or raw itself when it is not JSON.
func canonicalOrRaw(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// item returns the turn's one output item, completed or in progress
// (empty, as the stream's output_item.added shows it).
func (t responsesTurn) item(done bool) map[string]any {
	status := "in_progress"
	if done {
		status = "completed"
		if t.cut {
			status = "incomplete"
		}
	}
	if t.call != nil {
		args := ""
		if done {
			args = t.call.arguments
		}
		return map[string]any{"id": "fc_fake_" + t.baseID, "type": "function_call", "status": status,
			"arguments": args, "call_id": "call_fake_" + t.baseID, "name": t.call.name}
	}
	content := []any{}
	if done {
		content = []any{t.part(t.text)}
	}
	return map[string]any{"id": "msg_fake_" + t.baseID, "type": "message", "status": status, "role": "assistant", "content": content}
}

func (t responsesTurn) part(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

// response returns the response object with the given status; with done
// it holds the output item and the usage.
func (t responsesTurn) response(status string, done bool) map[string]any {
	if done && t.cut {
		status = "incomplete"
	}
	var maxOut, instr, incomplete any
	if t.maxToks > 0 {
		maxOut = t.maxToks
	}
	if t.instr != "" {
		instr = t.instr
	}
	if done && t.cut {
		incomplete = map[string]any{"reason": "max_output_tokens"}
	}
	metadata := any(map[string]any{})
	if m := bytes.TrimSpace(t.metadata); len(m) > 0 && string(m) != "null" {
		metadata = json.RawMessage(canonicalOrRaw(m))
	}
	output, usage := []any{}, any(nil)
	if done {
		output = []any{t.item(true)}
		usage = map[string]any{
			"input_tokens": t.in, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": t.out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": t.in + t.out,
		}
	}
	return map[string]any{
		"id": "resp_fake_" + t.baseID, "object": "response", "created_at": 0, "status": status,
		"background": false, "error": nil, "incomplete_details": incomplete, "instructions": instr,
		"max_output_tokens": maxOut, "model": t.model, "output": output, "parallel_tool_calls": true,
		"previous_response_id": nil, "reasoning": map[string]any{"effort": nil, "summary": nil},
		"store": true, "temperature": 1.0, "text": map[string]any{"format": map[string]any{"type": "text"}},
		"tool_choice": "auto", "tools": []any{}, "top_p": 1.0, "truncation": "disabled",
		"usage": usage, "user": nil, "metadata": metadata,
	}
}

// writeResponsesStream answers a streaming Responses request with the
// API's typed events, each numbered by sequence_number from 0 and named in
// an "event:" line; the stream ends with response.completed (or
// response.incomplete), with no [DONE] line. The Truncated mode stops
// after the text deltas.
func (s *Server) writeResponsesStream(w http.ResponseWriter, t responsesTurn) {
	var b bytes.Buffer
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		event(&b, typ, fields)
	}
	send("response.created", map[string]any{"response": t.response("in_progress", false)})
	send("response.in_progress", map[string]any{"response": t.response("in_progress", false)})
	send("response.output_item.added", map[string]any{"output_index": 0, "item": t.item(false)})
	id := t.item(false)["id"]
	if t.call != nil {
		for _, piece := range chunks(t.call.arguments, s.cfg.ChunkSize) {
			send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": 0, "delta": piece})
		}
		send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": 0, "name": t.call.name, "arguments": t.call.arguments})
	} else {
		at := map[string]any{"item_id": id, "output_index": 0, "content_index": 0}
		with := func(k string, v any) map[string]any {
			m := map[string]any{k: v}
			for k, v := range at {
				m[k] = v
			}
			return m
		}
		send("response.content_part.added", with("part", t.part("")))
		for _, piece := range chunks(t.text, s.cfg.ChunkSize) {
			d := with("delta", piece)
			d["logprobs"] = []any{}
			send("response.output_text.delta", d)
		}
		if t.mode == Truncated {
			writeSSE(w, b.Bytes())
			return
		}
		d := with("text", t.text)
		d["logprobs"] = []any{}
		send("response.output_text.done", d)
		send("response.content_part.done", with("part", t.part(t.text)))
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": t.item(true)})
	final := "response.completed"
	if t.cut {
		final = "response.incomplete"
	}
	send(final, map[string]any{"response": t.response("completed", true)})
	writeSSE(w, b.Bytes())
}

func writeSSE(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
