package cassettes

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/codegenie/codegenie/internal/chunking"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// servedState is what a Cassette has done with one recorded interaction.
type servedState struct {
	started bool // served at least once (Close does not call it unused)
	busy    bool // served, and not given back by a cancelled read
}

// replay serves req from the cassette's index: the recorded interaction
// with req's key, whose meaningful headers agree, that is not busy, that
// pick chooses; a miss as answerMiss answers it. Nothing is ever sent
// anywhere.
func (c *Cassette) replay(req *http.Request) (*http.Response, error) {
	buf := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(buf)
	body, err := readBody(req, (*buf)[:0])
	if err != nil {
		return nil, newErr(c.path, 0, "replay", fmt.Errorf("reading request body: %w", err))
	}
	if cap(body) <= maxPooledBody {
		*buf = body
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if err := checkBodyHash(req.Header, body); err != nil {
		return nil, newErr(c.path, 0, "replay", err)
	}
	cr := canonicalHead(req.Method, req.URL, req.Header, c.p.urls)
	p := c.p
	// Fast path: a recorded body with the same bytes has the same
	// canonical body, so its key is ours if method, URL and how the
	// headers say to read the body (Content-Encoding, boundary) agree.
	var candidates []int
	for _, i := range p.raw2i[string(body)] {
		if rc := p.canon[i]; rc.method == cr.method && rc.url == cr.url && rc.form == cr.form {
			candidates = p.index[p.keys[i]]
			break
		}
	}
	if candidates == nil {
		cr.setBody(bytes.Clone(body)) // body goes back to the pool
		candidates = p.index[cr.key()]
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, newErr(c.path, 0, "replay", errClosed)
	}
	target := c.pick(req.Context(), candidates, cr.headers)
	if target < 0 {
		if cr.body == nil {
			cr.setBody(bytes.Clone(body))
		}
		return answerMiss(req, c.miss(cr, candidates))
	}
	c.state[target].started = true
	c.state[target].busy = !c.cfg.replayable
	wait, scale := c.latencyOf(target)
	if wait > 0 {
		c.mu.Unlock()
		err := sleepContext(req.Context(), wait)
		c.mu.Lock()
		if err != nil {
			// As a cancelled read: a retry is served it again.
			c.state[target].busy = false
			return nil, err
		}
	}
	return c.responseFor(req, target, scale), nil
}

// bodyPool recycles request body buffers: a body is only looked at while
// its request is matched.
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody bounds the buffers bodyPool keeps.
const maxPooledBody = 1 << 20

// readBody reads and closes req's body into buf, growing it once when the
// request declares its length.
func readBody(req *http.Request, buf []byte) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return buf, nil
	}
	defer req.Body.Close()
	if n := req.ContentLength; n > 0 && n <= maxCassetteBytes {
		buf = slices.Grow(buf, int(n)+1)
	}
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 512)
		}
		n, err := req.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
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
func (c *Cassette) responseFor(req *http.Request, i int, scale float64) *http.Response {
	r := &c.interaction(i).Response
	t := &c.p.resps[i]
	body := newReplayBody(req.Context(), r.Body, t.framing)
	body.onCancel = func() { c.giveBack(i) }
	body.pace = pacerFor(t.offsets, c.cfg.Timing, scale)
	return &http.Response{
		Status:           t.status,
		StatusCode:       r.Code,
		Proto:            r.Proto,
		ProtoMajor:       r.ProtoMajor,
		ProtoMinor:       r.ProtoMinor,
		TransferEncoding: slices.Clone(r.TransferEncoding),
		Trailer:          t.trailer.Clone(),
		ContentLength:    t.contentLength,
		Uncompressed:     r.Uncompressed,
		Header:           t.header.Clone(),
		Body:             chunked(body, chunking.From(req.Context()), i),
		Close:            true,
		Request:          req,
	}
}

// respTemplate is what responseFor needs of a recorded response, worked
// out once per parsed cassette.
type respTemplate struct {
	header, trailer http.Header // canonical names; cloned for each caller
	framing         framing
	status          string
	contentLength   int64
	// offsets are the recorded frame offsets (frameOffsetsHeader, which
	// header no longer holds).
	offsets []time.Duration
	// err says why the response cannot be served: a stream that cannot be
	// split into frames, or offsets that do not fit it.
	err error
	// inferred is the Content-Type the body evidently has, served because
	// the recording kept none ("" when it kept one).
	inferred string
}

func newRespTemplate(r *cassette.Response) respTemplate {
	t := respTemplate{
		header:        canonicalKeys(r.Headers).Clone(),
		trailer:       canonicalKeys(r.Trailer).Clone(),
		status:        statusOf(r),
		contentLength: r.ContentLength,
	}
	if t.header == nil {
		t.header = http.Header{}
	}
	if t.header.Get("Content-Type") == "" {
		if mt := sniffMedia(r.Body); mt != "" {
			t.header.Set("Content-Type", mt)
			t.inferred = mt
		}
	}
	t.framing = framingOf(t.header, r.Body)
	if t.framing == framingEventStream {
		if _, err := t.framing.count(r.Body); err != nil {
			t.err = fmt.Errorf("a response that cannot be served: %w", err)
		}
	}
	var err error
	if t.offsets, err = takeOffsets(t.header, r.Body, t.framing); err != nil && t.err == nil {
		t.err = fmt.Errorf("unusable frame offsets: %w", err)
	}
	if t.contentLength >= 0 && t.contentLength != int64(len(r.Body)) {
		t.contentLength = -1
	}
	return t
}

// statusOf is the recorded status line, or one made from the code when a
// recorder left it out.
func statusOf(r *cassette.Response) string {
	if r.Status != "" {
		return r.Status
	}
	return fmt.Sprintf("%d %s", r.Code, http.StatusText(r.Code))
}
