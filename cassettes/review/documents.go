package review

import (
	"encoding/json"
	"mime"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
)

// A doc is one JSON document of a response: the whole body, or the data
// of one frame of a stream.
type doc struct {
	// event is the frame's name: a server-sent event's event line, an AWS
	// event-stream message's :event-type (or, for an exception, its
	// :exception-type or :error-code); "" when the framing has none.
	event string
	data  []byte
	// exception marks an AWS event-stream exception or error message.
	exception bool
}

// documents splits r's response body into the JSON documents a client
// reads, by its framing:
//
//	text/event-stream                    each frame's data (cassettes' splitter)
//	application/vnd.amazon.eventstream   each message's payload (a chunk's
//	                                     decoded bytes)
//	application/x-ndjson (or ndjson,     each non-empty line; an Ollama body
//	jsonl, x-jsonlines)                  of several lines is read so too
//	Gemini's streamGenerateContent as    each element of the array
//	a JSON array
//	anything else                        the body
//
// streamed says the body was a stream of frames frames.
func documents(r cassettes.Recorded, api string) (docs []doc, streamed bool, frames int) {
	mt, _, _ := mime.ParseMediaType(r.ResponseHeaders.Get("Content-Type"))
	body := r.ResponseBody
	switch {
	case mt == "text/event-stream":
		for frame := range r.Frames() {
			frames++
			if ev, data := parseFrame(frame); data != "" {
				docs = append(docs, doc{event: ev, data: []byte(data)})
			}
		}
		return docs, true, frames
	case mt == "application/vnd.amazon.eventstream":
		msgs, _ := esFrames([]byte(body))
		for _, m := range msgs {
			docs = append(docs, esDoc(m))
		}
		return docs, true, len(msgs)
	case mt == "application/x-ndjson" || mt == "application/ndjson" || mt == "application/jsonl" || mt == "application/x-jsonlines" ||
		api == apiOllama && strings.Count(strings.TrimSpace(body), "\n") > 0:
		for line := range strings.Lines(body) {
			if line = strings.TrimSpace(line); line != "" {
				docs = append(docs, doc{data: []byte(line)})
			}
		}
		return docs, true, len(docs)
	case api == apiGemini && strings.HasPrefix(strings.TrimSpace(body), "["):
		dec := json.NewDecoder(strings.NewReader(body))
		if _, err := dec.Token(); err != nil {
			break
		}
		for dec.More() {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				break
			}
			docs = append(docs, doc{data: raw})
		}
		return docs, true, len(docs)
	}
	return []doc{{data: []byte(body)}}, false, 0
}

// esDoc is the document of one event-stream message.
func esDoc(m esFrame) doc {
	switch m.headers[":message-type"] {
	case "exception":
		return doc{event: m.headers[":exception-type"], data: m.payload, exception: true}
	case "error":
		b, _ := json.Marshal(map[string]string{"message": m.headers[":error-message"]})
		return doc{event: m.headers[":error-code"], data: b, exception: true}
	}
	ev := m.headers[":event-type"]
	if ev == "chunk" {
		// InvokeModelWithResponseStream: the model's own event,
		// base64-encoded in "bytes".
		var c struct {
			Bytes []byte `json:"bytes"`
		}
		if json.Unmarshal(m.payload, &c) == nil && c.Bytes != nil {
			return doc{data: c.Bytes}
		}
	}
	return doc{event: ev, data: m.payload}
}

// parseFrame returns the event name and the joined data lines of one
// server-sent-events frame.
func parseFrame(frame string) (event, data string) {
	var lines []string
	for line := range strings.Lines(frame) {
		line = strings.TrimRight(line, "\r\n")
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "event":
			event = value
		case "data":
			lines = append(lines, value)
		}
	}
	return event, strings.Join(lines, "\n")
}
