package cassettes

import (
	"fmt"
	"io"
	"net/http"
	"slices"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// servedState is what a Cassette has done with one recorded interaction.
type servedState struct {
	started bool // served at least once (Close does not call it unused)
	busy    bool // served, and not given back by a cancelled read
}

// replay serves req from the cassette's index: the first recorded
// interaction with req's key, whose meaningful headers agree, that is not
// busy. Nothing is ever sent anywhere.
func (c *Cassette) replay(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, newErr(c.path, 0, "replay", fmt.Errorf("reading request body: %w", err))
		}
		body = b
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	cr := canonicalHead(req.Method, req.URL, req.Header)
	p := c.p
	// Fast path: a recorded body with the same bytes has the same
	// canonical body, so its key is ours if method and URL agree.
	var candidates []int
	for _, i := range p.raw2i[string(body)] {
		if rc := p.canon[i]; rc.method == cr.method && rc.url == cr.url {
			candidates = p.index[p.keys[i]]
			break
		}
	}
	if candidates == nil {
		cr.setBody(body)
		candidates = p.index[cr.key()]
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, newErr(c.path, 0, "replay", ErrClosed)
	}
	target := -1
	for _, i := range candidates {
		if !c.state[i].busy && headerConflict(p.canon[i].headers, cr.headers) < 0 {
			target = i
			break
		}
	}
	if target < 0 {
		if cr.body == nil {
			cr.setBody(body)
		}
		return nil, c.miss(cr, candidates)
	}
	c.state[target].started = true
	c.state[target].busy = !c.opts.replayable
	return c.responseFor(req, target), nil
}

// giveBack makes interaction i servable again: its reader was cancelled
// before the end, so the caller's retry is served it again, as the API
// would answer a retried request.
func (c *Cassette) giveBack(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state[i].busy = false
}

// responseFor builds a fresh response from recorded interaction i: the
// caller gets its own header maps and its own body reader, so concurrent
// replays share nothing mutable.
func (c *Cassette) responseFor(req *http.Request, i int) *http.Response {
	r := &c.interaction(i).Response
	cl := r.ContentLength
	if cl >= 0 && cl != int64(len(r.Body)) {
		cl = -1
	}
	h := canonicalKeys(cloneValues(r.Headers))
	if h == nil {
		h = http.Header{}
	}
	body := newReplayBody(req.Context(), r.Body, isSSE(h))
	body.onCancel = func() { c.giveBack(i) }
	return &http.Response{
		Status:           statusOf(r),
		StatusCode:       r.Code,
		Proto:            r.Proto,
		ProtoMajor:       r.ProtoMajor,
		ProtoMinor:       r.ProtoMinor,
		TransferEncoding: slices.Clone(r.TransferEncoding),
		Trailer:          cloneValues(r.Trailer),
		ContentLength:    cl,
		Uncompressed:     r.Uncompressed,
		Header:           h,
		Body:             body,
		Close:            true,
		Request:          req,
	}
}

// statusOf is the recorded status line, or one made from the code when a
// recorder left it out.
func statusOf(r *cassette.Response) string {
	if r.Status != "" {
		return r.Status
	}
	return fmt.Sprintf("%d %s", r.Code, http.StatusText(r.Code))
}
