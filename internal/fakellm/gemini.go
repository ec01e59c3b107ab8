package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// geminiRequest is the part of a Gemini API generateContent request the
// server reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []geminiFunction `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		MaxOutputTokens *int64 `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

type geminiContent struct {
	Role  string                       `json:"role"`
	Parts []map[string]json.RawMessage `json:"parts"`
}

type geminiFunction struct {
	Name                 string          `json:"name"`
	Parameters           json.RawMessage `json:"parameters"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
}

// geminiPartData are the members of a Part's "data" oneof.
var geminiPartData = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"}

// geminiStatus is the google.rpc status name the API gives an HTTP status.
func geminiStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

func geminiError(code int, msg string) any {
	return map[string]any{"error": map[string]any{"code": code, "message": msg, "status": geminiStatus(code)}}
}

// serveGemini answers POST .../models/{model}:generateContent and
// :streamGenerateContent (server-sent events with alt=sse, else one JSON
// array written as the stream goes).
func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, geminiError)
	if !ok {
		return
	}
	if key := s.cfg.APIKey; key != "" && r.Header.Get("X-Goog-Api-Key") != key && r.URL.Query().Get("key") != key {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
			"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
				"domain": "googleapis.com", "metadata": map[string]any{"service": "generativelanguage.googleapis.com"}}},
		}})
		return
	}
	method := r.URL.Path[strings.LastIndex(r.URL.Path, ":")+1:]
	model := strings.TrimSuffix(r.URL.Path, ":"+method)
	model = model[strings.LastIndex(model, "/models/")+len("/models/"):]
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, geminiError(http.StatusBadRequest, "Invalid JSON payload received. "+err.Error()))
		return
	}
	if msg := req.invalid(); msg != "" {
		writeJSON(w, http.StatusBadRequest, geminiError(http.StatusBadRequest, msg))
		return
	}
	system := ""
	if req.SystemInstruction != nil {
		system = req.SystemInstruction.text()
	}
	user := req.Contents[len(req.Contents)-1].text()
	var maxTokens int64
	if m := req.GenerationConfig.MaxOutputTokens; m != nil {
		maxTokens = *m
	}
	id := requestID("gemini", model, fmt.Sprint(maxTokens), system, user)
	var funcs []declaredTool
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			funcs = append(funcs, declaredTool{name: f.Name, schema: schema})
		}
	}
	usage := map[string]any{"promptTokenCount": tokens(system) + tokens(user)}
	var pieces []map[string]any // the parts of the answer, one per stream chunk
	finish := "STOP"
	truncated := false
	if call, ok := calledTool(funcs, user); ok {
		pieces = append(pieces, map[string]any{"functionCall": map[string]any{"name": call.name, "args": call.args}})
		usage["candidatesTokenCount"] = tokens(string(marshal(call.args)))
	} else {
		rep := s.answer(user)
		if rep.status != http.StatusOK {
			writeJSON(w, rep.status, geminiError(rep.status, rep.text))
			return
		}
		text, cut := truncate(rep.text, maxTokens)
		if cut {
			finish = "MAX_TOKENS"
		}
		truncated = rep.mode == Truncated
		for _, c := range chunks(text, s.cfg.ChunkSize) {
			pieces = append(pieces, map[string]any{"text": c})
		}
		usage["candidatesTokenCount"] = tokens(text)
	}
	usage["totalTokenCount"] = usage["promptTokenCount"].(int64) + usage["candidatesTokenCount"].(int64)
	response := func(parts []map[string]any, last bool) map[string]any {
		content := map[string]any{"role": "model"}
		if len(parts) > 0 {
			content["parts"] = parts
		}
		cand := map[string]any{"content": content, "index": 0}
		if last {
			cand["finishReason"] = finish
		}
		return map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": model, "responseId": id}
	}
	if method == "generateContent" {
		writeJSON(w, http.StatusOK, response(mergeText(pieces), true))
		return
	}
	var frames [][]byte
	for i, c := range pieces {
		frames = append(frames, marshal(response([]map[string]any{c}, i == len(pieces)-1 && !truncated)))
	}
	if len(pieces) == 0 {
		frames = append(frames, marshal(response(nil, true)))
	}
	var b bytes.Buffer
	if r.URL.Query().Get("alt") == "sse" {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, f := range frames {
			b.WriteString("data: ")
			b.Write(f)
			b.WriteString("\r\n\r\n")
		}
	} else {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		b.WriteString("[")
		for i, f := range frames {
			if i > 0 {
				b.WriteString(",\r\n")
			}
			b.Write(f)
		}
		b.WriteString("]")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}

// invalid returns the API's message for a request it refuses, or "".
func (req *geminiRequest) invalid() string {
	if len(req.Contents) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified\n"
	}
	for i, c := range req.Contents {
		if len(c.Parts) == 0 {
			return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.\n", i)
		}
		for j, p := range c.Parts {
			if !slices.ContainsFunc(geminiPartData, func(k string) bool { _, ok := p[k]; return ok }) {
				return fmt.Sprintf("* GenerateContentRequest.contents[%d].parts[%d].data: required oneof field 'data' must have one initialized field\n", i, j)
			}
		}
	}
	return ""
}

// text returns the text of c's text parts, and the JSON of its function
// responses, in order.
func (c *geminiContent) text() string { return geminiPartsText(c.Parts, "functionResponse") }

// geminiPartsText returns the text of the parts' "text" members and the JSON of
// their resultKey members (a tool's result), in order.
func geminiPartsText(parts []map[string]json.RawMessage, resultKey string) string {
	var b strings.Builder
	for _, p := range parts {
		if raw, ok := p["text"]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				b.WriteString(s)
			}
		}
		if raw, ok := p[resultKey]; ok {
			b.Write(raw)
		}
	}
	return b.String()
}

// mergeText joins consecutive text parts into one, as a non-streamed
// answer has them.
func mergeText(parts []map[string]any) []map[string]any {
	var out []map[string]any
	for _, p := range parts {
		t, ok := p["text"].(string)
		if n := len(out); ok && n > 0 {
			if prev, ok := out[n-1]["text"].(string); ok {
				out[n-1] = map[string]any{"text": prev + t}
				continue
			}
		}
		out = append(out, p)
	}
	if out == nil {
		return []map[string]any{}
	}
	return out
}

// declaredTool is a function a request offers the model: its name and
// its parameters' JSON schema.
type declaredTool struct {
	name   string
	schema json.RawMessage
}

// toolCall is the call the server answers with.
type toolCall struct {
	name string
	args map[string]any
}

// calledTool returns the call to the first declared tool whose name the
// prompt contains, if any. Its arguments are the schema's required
// properties, each set by its type: a string to the prompt, an integer or
// a number to the prompt's length in bytes, a boolean to true, an array
// to [] and an object to {} (anything else null).
func calledTool(tools []declaredTool, prompt string) (toolCall, bool) {
	for _, t := range tools {
		if t.name == "" || !strings.Contains(prompt, t.name) {
			continue
		}
		var schema struct {
			Properties map[string]struct {
				Type json.RawMessage `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(t.schema, &schema)
		args := map[string]any{}
		for _, name := range schema.Required {
			var typ string
			_ = json.Unmarshal(schema.Properties[name].Type, &typ)
			switch strings.ToLower(typ) {
			case "string":
				args[name] = prompt
			case "integer", "number":
				args[name] = len(prompt)
			case "boolean":
				args[name] = true
			case "array":
				args[name] = []any{}
			case "object":
				args[name] = map[string]any{}
			default:
				args[name] = nil
			}
		}
		return toolCall{name: t.name, args: args}, true
	}
	return toolCall{}, false
}
