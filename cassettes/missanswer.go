package cassettes

import (
	"net/http"
	"strings"
)

// A miss reaches the client that sent the request as the transport's
// error, except for the clients that would retry that error with backoff
// and can be told not to in a response: the SDKs Stainless generates
// (openai-go, anthropic-sdk-go, ...), which mark every request with
// X-Stainless-* headers, retry every transport error (twice by default),
// and retry no response whose X-Should-Retry header is "false". Those get
// a response that carries the miss: status 404, X-Should-Retry: false,
// and a body whose every Read returns the miss error. Both SDKs read the
// body of an error status before they return, so the error they return
// is the miss (openai-go) or wraps it (anthropic-sdk-go: "error reading
// response body: ..."), errors.Is finds ErrInteractionNotFound in it,
// and the request was sent once. 404 is a status neither SDK retries by
// itself, should one ignore the header.

// missStatus is the status of a miss answered as a response.
const missStatus = http.StatusNotFound

// answerMiss returns how the miss reaches the client that sent req: a
// response carrying it for a client that honours X-Should-Retry (see
// above), else the error.
func answerMiss(req *http.Request, miss error) (*http.Response, error) {
	if !honoursShouldRetry(req.Header) {
		return nil, miss
	}
	return &http.Response{
		Status:     "404 cassette miss",
		StatusCode: missStatus,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header: http.Header{
			"X-Should-Retry": {"false"},
			"Content-Type":   {"text/plain; charset=utf-8"},
		},
		ContentLength: -1,
		Body:          missBody{miss},
		Close:         true,
		Request:       req,
	}, nil
}

// honoursShouldRetry reports whether h is the header of a request from a
// client Stainless generated: one with an X-Stainless-* header.
func honoursShouldRetry(h http.Header) bool {
	for name := range h {
		if len(name) > len("X-Stainless-") && strings.EqualFold(name[:len("X-Stainless-")], "X-Stainless-") {
			return true
		}
	}
	return false
}

// missBody is the body of a miss answered as a response: every Read
// returns the miss.
type missBody struct{ miss error }

func (b missBody) Read([]byte) (int, error) { return 0, b.miss }
func (missBody) Close() error               { return nil }

// CassetteMiss returns the miss the response carries, for code between
// the client and the cassette that counts misses (package harness does,
// through an interface{ CassetteMiss() error } on the response's body).
func (b missBody) CassetteMiss() error { return b.miss }
