package harness

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/codegenie/codegenie/cassettes"
)

// runClient is the transport of a Run's client: one cassette, opened for
// one run, with a run-dependent fake latency inside a bubble (the
// cassette applies it; calls counts the responses timed) and a record of
// what was asked.
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
	cfg := r.rc.Cassette
	cfg.Mode = cassettes.Replay
	cfg.RealTransport = closingTransport{next: cfg.RealTransport}
	_, seen := o.paths[path]
	cfg.ReplayOnly = seen
	rc := &runClient{run: r}
	if r.bubble {
		cfg.Latency = func(recorded time.Duration) time.Duration {
			rc.mu.Lock()
			call := rc.calls
			rc.calls++
			rc.mu.Unlock()
			return r.rc.Latency(r.rc.latency.runFor(r.index), call, recorded)
		}
	}
	// The gate names the command that records again itself, once, and
	// only when that is the answer; a cassette's own errors name none.
	cfg.Hint = ""
	c, err := cassettes.Open(stablePath(path), cfg)
	if err != nil {
		if !seen {
			// Named by the command that records it (it may not exist).
			o.paths[path] = false
		}
		return nil, fmt.Errorf("harness: run %d: %w", r.index, err)
	}
	if !seen {
		o.paths[path] = c.Mode() == cassettes.Record
		if c.Mode() == cassettes.Record {
			o.noteRecorder(path, c)
		}
	}
	rc.c = c
	return rc, nil
}

// CassetteID returns the digest of the cassette the client replays.
func (rc *runClient) CassetteID() string { return rc.c.ID() }

// RoundTrip replays req from the cassette. It notes the request's digest
// (method, URL, body) so classes of runs can be told apart by what they
// asked, and a miss with what it means, so the run fails even if the
// scenario swallowed it. Inside a bubble the cassette delays the
// response by Config.Latency (see cassettes.Config.Latency), and cuts
// its body into the Reads of the run's chunk plan (see Report.Chunking).
func (rc *runClient) RoundTrip(req *http.Request) (*http.Response, error) {
	sent, req, err := readRequest(req)
	if err != nil {
		return nil, err
	}
	i := rc.run.noteRequest(sent)
	req, ar, lane := rc.withAssignment(req)
	req = rc.run.rc.chunks.withPlan(req, rc.run.index)
	resp, err := rc.c.Transport().RoundTrip(req)
	miss := err // the cassette's error, or the miss it answered as a response
	if err == nil {
		// A miss the cassette answered as a response, for a client that
		// would retry its error (see cassettes' Misses).
		if m, ok := resp.Body.(interface{ CassetteMiss() error }); ok {
			miss = m.CassetteMiss()
		} else {
			rc.run.noteAssignment(i, lane, ar)
		}
	}
	var typed *cassettes.MissError
	if errors.As(miss, &typed) {
		rc.run.noteMiss(i, typed)
		rc.mu.Lock()
		if rc.miss == nil {
			rc.miss = miss
		}
		rc.mu.Unlock()
	}
	return resp, err
}

// finish closes the cassette and returns the first miss and the close
// error (unused interactions, or a recording that was not saved).
func (rc *runClient) finish() (miss, closeErr error) {
	rc.mu.Lock()
	miss = rc.miss
	rc.mu.Unlock()
	closeErr = rc.c.Close()
	rc.run.rc.opened.noteClosed(rc.c, closeErr, rc.run.rc.Cassette.APIKey)
	return miss, closeErr
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
