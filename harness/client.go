package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/hint"
)

// runClient is the transport of a Run's client: one cassette, opened for
// one run, with a run-dependent fake latency inside a bubble and a record
// of what was asked.
type runClient struct {
	run *Run
	c   *cassettes.Cassette

	mu    sync.Mutex
	calls int
	miss  error
}

// openRunClient opens the cassette at path for run r. The first run of a
// gate that opens path opens it as the test flags say (it records when
// -cassettes.record selects it); every later opening replays.
func openRunClient(r *Run, path string) (*runClient, error) {
	o := r.rc.opened
	o.mu.Lock()
	defer o.mu.Unlock()
	opts := r.rc.Cassette
	opts.Mode = cassettes.Replay
	opts.RealTransport = closingTransport{next: opts.RealTransport}
	_, seen := o.paths[path]
	opts.ReplayOnly = seen
	if opts.Hint == "" && r.rc.test != "" {
		opts.Hint = hint.GoTest(r.rc.test, false, "-"+cassettes.RecordFlag+"="+regexp.QuoteMeta(filepath.Base(path))+"$")
	}
	c, err := cassettes.Open(path, opts)
	if err != nil {
		return nil, fmt.Errorf("harness: run %d: %w", r.index, err)
	}
	if !seen {
		o.paths[path] = c.Mode() == cassettes.Record
		if c.Mode() == cassettes.Record {
			o.noteRecorder(path, c)
		}
	}
	return &runClient{run: r, c: c}, nil
}

// CassetteID returns the digest of the cassette the client replays.
func (rc *runClient) CassetteID() string { return rc.c.ID() }

// RoundTrip replays req from the cassette. It notes the request's digest
// (method, URL, body) so classes of runs can be told apart by what they
// asked, remembers a miss so the run fails even if the scenario swallowed
// it, and inside a bubble delays the response by Config.Latency.
func (rc *runClient) RoundTrip(req *http.Request) (*http.Response, error) {
	d, req, err := requestDigest(req)
	if err != nil {
		return nil, err
	}
	rc.run.noteRequest(d)
	rc.mu.Lock()
	call := rc.calls
	rc.calls++
	rc.mu.Unlock()
	if rc.run.bubble {
		t := time.NewTimer(rc.run.rc.Latency(rc.run.index, call))
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		}
	}
	resp, err := rc.c.Transport().RoundTrip(req)
	if err != nil && (errors.Is(err, cassettes.ErrInteractionNotFound) || errors.Is(err, cassettes.ErrExhausted)) {
		rc.mu.Lock()
		if rc.miss == nil {
			rc.miss = err
		}
		rc.mu.Unlock()
	}
	return resp, err
}

// finish closes the cassette and returns the first miss and the close
// error (unused interactions).
func (rc *runClient) finish() (miss, closeErr error) {
	rc.mu.Lock()
	miss = rc.miss
	rc.mu.Unlock()
	return miss, rc.c.Close()
}

// requestDigest returns blake3-256 over the request's method, URL and
// body (each length-prefixed), and the request with its body restored.
func requestDigest(req *http.Request) (events.Digest, *http.Request, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return events.Digest{}, nil, fmt.Errorf("harness: read request body: %w", err)
		}
		body = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	var buf []byte
	for _, part := range [][]byte{[]byte(req.Method), []byte(req.URL.String()), body} {
		buf = fmt.Appendf(buf, "%d:", len(part))
		buf = append(buf, part...)
	}
	return events.Sum(buf), req, nil
}

// closingTransport is what a run records through: the configured
// transport, asked to close each connection after its response, so that
// no idle connection (and no goroutine reading it) outlives the run. A
// bubble could not end while one waits on the network, and outside a
// bubble it would be reported as a leak.
type closingTransport struct{ next http.RoundTripper }

func (c closingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := c.next
	if next == nil {
		next = http.DefaultTransport
	}
	req = req.Clone(req.Context())
	req.Close = true
	return next.RoundTrip(req)
}
