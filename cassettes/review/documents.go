package review

import (
	"encoding/json"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/eventstream"
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

// documents reads r's response body as the JSON documents a client
// reads, frame by frame as cassettes.Recorded.Frames splits it:
//
//	sse           each frame's data
//	eventstream   each message's payload (a chunk's decoded bytes), up
//	              to the first message whose headers cannot be read
//	ndjson        each non-empty line
//	json-array    each element, up to the first that is not JSON or not
//	              after a ","; of Gemini's streamGenerateContent only
//	              (another API's array is one answer)
//	no framing    the body
//
// streamed says the body was a stream of frames frames: every frame of
// server-sent events, the frames with a document of the others.
func documents(r cassettes.Recorded, api string) (docs []doc, streamed bool, frames int) {
	framing := r.Framing()
	if framing == "" || framing == "json-array" && api != apiGemini {
		return []doc{{data: []byte(r.ResponseBody)}}, false, 0
	}
	for frame := range r.Frames() {
		switch framing {
		case "sse":
			if ev, data := parseFrame(frame); data != "" {
				docs = append(docs, doc{event: ev, data: []byte(data)})
			}
		case "eventstream":
			m, err := eventstream.Decode(frame)
			if err != nil {
				return docs, true, frames
			}
			docs = append(docs, esDoc(m))
		case "ndjson":
			line := strings.TrimSpace(frame)
			if line == "" {
				continue
			}
			docs = append(docs, doc{data: []byte(line)})
		case "json-array":
			el := arrayElement(frame, frames == 0)
			if !json.Valid([]byte(el)) {
				return docs, true, frames
			}
			docs = append(docs, doc{data: []byte(el)})
		}
		frames++
	}
	return docs, true, frames
}

// arrayElement is the element a frame of a streamed JSON array holds:
// what follows the "[" (of the first frame) or the "," before it, white
// space trimmed; "" for a frame without it (the closing "]").
func arrayElement(frame string, first bool) string {
	const space = " \t\r\n"
	sep := ","
	if first {
		sep = "["
	}
	el, ok := strings.CutPrefix(strings.TrimLeft(frame, space), sep)
	if !ok {
		return ""
	}
	return strings.TrimLeft(el, space)
}

// esDoc is the document of one event-stream message.
func esDoc(m eventstream.Message) doc {
	switch m.Headers[":message-type"] {
	case "exception":
		return doc{event: m.Headers[":exception-type"], data: []byte(m.Payload), exception: true}
	case "error":
		b, _ := json.Marshal(map[string]string{"message": m.Headers[":error-message"]})
		return doc{event: m.Headers[":error-code"], data: b, exception: true}
	}
	ev := m.Headers[":event-type"]
	if ev == "chunk" {
		// InvokeModelWithResponseStream: the model's own event,
		// base64-encoded in "bytes".
		var c struct {
			Bytes []byte `json:"bytes"`
		}
		if json.Unmarshal([]byte(m.Payload), &c) == nil && c.Bytes != nil {
			return doc{data: c.Bytes}
		}
	}
	return doc{event: ev, data: []byte(m.Payload)}
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
