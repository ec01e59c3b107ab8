package cassettes

import (
	"fmt"
	"iter"
	"mime"
	"net/http"
	"strings"

	"github.com/codegenie/codegenie/internal/eventstream"
)

// framing is how a streamed response body divides into frames: the unit
// recording times, and replay delivers (at most one frame per Read) and
// paces. Each framing has one splitter, which finds the end of the frame
// starting at a frame start in one forward scan, in time linear in the
// frame and constant memory. An opaque body is one piece.
type framing uint8

const (
	opaque framing = iota
	// framingSSE: server-sent events (text/event-stream), frames ended by
	// a blank line.
	framingSSE
	// framingNDJSON: newline-delimited JSON (Ollama), frames ended by
	// "\n".
	framingNDJSON
	// framingJSONArray: a JSON array whose elements arrive over time
	// (Gemini's streamGenerateContent without alt=sse), a frame per
	// element.
	framingJSONArray
	// framingEventStream: AWS's binary event stream
	// (application/vnd.amazon.eventstream), length-prefixed frames with
	// CRCs, split by internal/eventstream.
	framingEventStream
)

func (f framing) String() string {
	switch f {
	case framingSSE:
		return "server-sent-events stream"
	case framingNDJSON:
		return "NDJSON stream"
	case framingJSONArray:
		return "streamed JSON array"
	case framingEventStream:
		return "AWS event stream"
	}
	return "response body"
}

// name is the framing's name in the API, Recorded.Framing.
func (f framing) name() string {
	switch f {
	case framingSSE:
		return "sse"
	case framingNDJSON:
		return "ndjson"
	case framingJSONArray:
		return "json-array"
	case framingEventStream:
		return "eventstream"
	}
	return ""
}

// framingOf returns the framing of a response body with headers h: by its
// Content-Type, and where that type is generic (application/json, or none)
// by the body: a top-level JSON array is a streamed array, JSON objects
// one per line are NDJSON. A body with a Content-Encoding is opaque: its
// bytes are not the stream's.
func framingOf(h http.Header, body string) framing {
	if len(contentCodings(h)) > 0 {
		return opaque
	}
	var mt string
	if ct := h.Get("Content-Type"); ct == "" {
		mt = sniffMedia(body)
	} else if t, _, err := mime.ParseMediaType(ct); err == nil {
		mt = t
	}
	switch mt {
	case "text/event-stream":
		return framingSSE
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines", "application/jsonlines":
		return framingNDJSON
	case "application/vnd.amazon.eventstream":
		return framingEventStream
	case mediaJSON:
		trimmed := strings.TrimLeft(body, " \t\r\n")
		switch {
		case strings.HasPrefix(trimmed, "["):
			return framingJSONArray
		case strings.Contains(trimmed, "}\n") && isNDJSON(strings.TrimSpace(trimmed)):
			return framingNDJSON
		}
	}
	return opaque
}

// next returns the end of the frame of s starting at off, a frame start
// before len(s). Only an AWS event stream can fail: a frame whose length
// runs past the body or out of bounds, or whose CRC is wrong.
func (f framing) next(s string, off int) (int, error) {
	switch f {
	case framingSSE:
		return frameEnd(s, off), nil
	case framingNDJSON:
		return lineEnd(s, off), nil
	case framingJSONArray:
		return elementEnd(s, off), nil
	case framingEventStream:
		return eventstream.End(s, off)
	}
	return len(s), nil
}

// end is next where a frame that cannot be split runs to the end of s.
func (f framing) end(s string, off int) int {
	end, err := f.next(s, off)
	if err != nil {
		return len(s)
	}
	return end
}

// ends yields the end of each frame of s in order, or, at the first
// frame it cannot split, an error naming that frame and stops.
func (f framing) ends(s string) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		for i, off := 0, 0; off < len(s); i++ {
			end, err := f.next(s, off)
			if err != nil {
				yield(0, fmt.Errorf("frame %d (at byte %d) of the %s: %w", i, off, f, err))
				return
			}
			if !yield(end, nil) {
				return
			}
			off = end
		}
	}
}

// count returns how many frames s has, or why it cannot be split.
func (f framing) count(s string) (int, error) {
	n := 0
	for _, err := range f.ends(s) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// frames yields the frames of s in order, up to the first it cannot
// split.
func (f framing) frames(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		off := 0
		for end, err := range f.ends(s) {
			if err != nil || !yield(s[off:end]) {
				return
			}
			off = end
		}
	}
}

// frameEnd returns the end of the server-sent-events frame starting at
// off: just past the first blank line ("\n\n", "\r\r", "\r\n\r\n", or a
// mix of line ends such as "\r\n\n"), found in one forward scan, or len(s).
func frameEnd(s string, off int) int {
	for i := off; i < len(s); i++ {
		var n int // length of the line end at i
		switch {
		case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
			n = 2
		case s[i] == '\n' || s[i] == '\r':
			n = 1
		default:
			continue
		}
		j := i + n
		switch {
		case j+1 < len(s) && s[j] == '\r' && s[j+1] == '\n':
			return j + 2
		case j < len(s) && (s[j] == '\n' || s[j] == '\r'):
			return j + 1
		}
		i = j - 1
	}
	return len(s)
}

// sseFrames yields the frames of an event stream, each with its ending
// blank line.
func sseFrames(s string) iter.Seq[string] { return framingSSE.frames(s) }

// lineEnd returns the end of the NDJSON line starting at off: just past
// its "\n", or len(s).
func lineEnd(s string, off int) int {
	if i := strings.IndexByte(s[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(s)
}

// elementEnd returns the end of the frame of a streamed JSON array that
// starts at off: the frame holds what precedes an element (the opening
// "[" for the first, the separating "," and white space for the others)
// and ends just past the element; what follows the last element (the
// closing "]") is a frame of its own. Strings and their escapes are
// honoured, brackets counted, nothing else checked: a body that is no
// array is one frame, and one cut short ends in a frame running to its
// end.
func elementEnd(s string, off int) int {
	i := off
	if off == 0 {
		for i < len(s) && isJSONSpace(s[i]) {
			i++
		}
		if i == len(s) || s[i] != '[' {
			return len(s)
		}
		i++
	}
	for i < len(s) && (isJSONSpace(s[i]) || s[i] == ',') {
		i++
	}
	if i == len(s) || s[i] == ']' {
		return len(s)
	}
	start, depth := i, 0
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			i = stringEnd(s, i)
			if depth == 0 {
				return i
			}
			i--
		case '{', '[':
			depth++
		case '}', ']':
			switch {
			case depth > 0:
				if depth--; depth == 0 {
					return i + 1
				}
			case i == start:
				return i + 1
			default:
				return i
			}
		default:
			if depth == 0 && (isJSONSpace(c) || c == ',') {
				return i
			}
		}
	}
	return len(s)
}

// stringEnd returns the end of the JSON string whose opening quote is at
// s[i]: just past its closing quote, or len(s).
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
