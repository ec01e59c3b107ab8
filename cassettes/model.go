package cassettes

import (
	"encoding/json"
	"net/http"
)

// modelOf is the model named by the first response of p that names one
// (a JSON body's or an event's "model", or Anthropic's message_start
// "message.model"), for the manifest's model field; "" when none does.
func modelOf(p *parsed) string {
	for _, in := range p.c.Interactions {
		if m := responseModel(in.Response.Body, in.Response.Headers); m != "" {
			return m
		}
	}
	return ""
}

// responseModel is the model a response body names, JSON or server-sent
// events (the first frame that names one).
func responseModel(body string, h map[string][]string) string {
	if !isSSE(http.Header(h)) {
		return documentModel(body)
	}
	for frame := range sseFrames(body) {
		if data := sseData(frame); data != "" {
			if m := documentModel(data); m != "" {
				return m
			}
		}
	}
	return ""
}

// documentModel is the model one JSON document names, or "".
func documentModel(data string) string {
	var m struct {
		Model   string `json:"model"`
		Message *struct {
			Model string `json:"model"`
		} `json:"message"`
	}
	if json.Unmarshal([]byte(data), &m) != nil {
		return ""
	}
	if m.Model == "" && m.Message != nil {
		return m.Message.Model
	}
	return m.Model
}
