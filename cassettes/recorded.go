package cassettes

import (
	"encoding/hex"
	"iter"
	"maps"
	"net/http"
	"slices"
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
		}
	}
	return out, nil
}

// Frames yields the frames of a text/event-stream response body, each up
// to and including the blank line that ends it, as replay delivers them
// (see Streaming in the package documentation). It yields nothing for any
// other response.
func (r Recorded) Frames() iter.Seq[string] {
	if !isSSE(r.ResponseHeaders) {
		return func(func(string) bool) {}
	}
	return sseFrames(r.ResponseBody)
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
