package cassettes

import (
	"encoding/hex"
	"iter"
	"maps"
	"net/http"
	"slices"
	"time"
)

// Recorded is one interaction of a cassette file as it is recorded, for
// tools that read cassettes rather than replay them (a review of a
// re-record, a report). It is a copy: changing it changes nothing.
type Recorded struct {
	// Line is the 1-based line of the interaction in the file.
	Line int
	// Key is the hex of the request's matching key (see Matching in the
	// package documentation): two requests replay each other's responses
	// only if their keys are equal.
	Key string

	Method         string
	URL            string
	RequestHeaders http.Header
	RequestBody    string

	// Status is the response's status code.
	Status          int
	ResponseHeaders http.Header
	ResponseBody    string
	// Duration is how long the response took as recorded (go-vcr's
	// duration field; see Re-recording and timing in the package
	// documentation).
	Duration time.Duration
}

// ReadRecorded returns the interactions of the cassette at path, in file
// order, after the checks Open makes of a file's form (it does not consult
// the manifest or scan for secrets: what it returns is never sent
// anywhere).
func ReadRecorded(path string) ([]Recorded, error) {
	p, err := readCassette(path, "")
	if err != nil {
		return nil, err
	}
	out := make([]Recorded, len(p.c.Interactions))
	for i, in := range p.c.Interactions {
		out[i] = Recorded{
			Line:            p.lines[i],
			Key:             hex.EncodeToString(p.keys[i][:]),
			Method:          in.Request.Method,
			URL:             in.Request.URL,
			RequestHeaders:  cloneHeader(in.Request.Headers),
			RequestBody:     in.Request.Body,
			Status:          in.Response.Code,
			ResponseHeaders: cloneHeader(in.Response.Headers),
			ResponseBody:    in.Response.Body,
			Duration:        in.Response.Duration,
		}
	}
	return out, nil
}

// Framing names how the response body divides into frames, the unit
// replay delivers and paces (see Streaming in the package documentation):
// "sse" (server-sent events), "ndjson" (newline-delimited JSON), "json-array"
// (a JSON array whose elements arrive over time, as Gemini's
// streamGenerateContent sends it), "eventstream" (AWS's binary event
// stream), or "" for a response that is no stream.
func (r Recorded) Framing() string {
	return framingOf(r.ResponseHeaders, r.ResponseBody).name()
}

// Frames yields the frames of a streamed response body in order, as
// replay delivers them, each the exact bytes of one frame (together they
// make up the body): a server-sent event up to and including the blank
// line that ends it; an NDJSON line with its "\n"; an element of a JSON
// array with what precedes it (the "[", or the "," and white space), and
// then the rest from the closing "]"; a whole event-stream message, its
// lengths and both CRCs checked, the frames before a bad one only. It
// yields nothing for a response that is no stream (Framing "").
func (r Recorded) Frames() iter.Seq[string] {
	f := framingOf(r.ResponseHeaders, r.ResponseBody)
	if f == opaque {
		return func(func(string) bool) {}
	}
	return f.frames(r.ResponseBody)
}

// cloneHeader deep-copies h with canonical names, as http.Header methods
// expect them.
func cloneHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for _, k := range slices.Sorted(maps.Keys(h)) {
		ck := http.CanonicalHeaderKey(k)
		out[ck] = append(out[ck], h[k]...)
	}
	return out
}
