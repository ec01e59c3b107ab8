package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
)

// Scenario runs the code under test once and returns its output bytes.
// run hands out what the run needs: its event recorder, replaying HTTP
// clients, and a place to pin the run's inputs. ctx is cancelled when the
// run ends.
//
// A returned error fails the run; it is compared like any other outcome
// (by its kind), so a scenario whose expected result is a failure should
// return that failure in the output instead. A failing scenario should
// still have recorded its events so far: the harness compares them with
// the other runs to show where the failing run left the common path.
type Scenario func(ctx context.Context, run *Run) ([]byte, error)

// Run is one run of a scenario. Its methods are safe for concurrent use
// during the run; nothing of it may be used after the scenario returned.
type Run struct {
	index  int
	bubble bool
	rc     *resolved
	rec    *events.Recorder

	mu       sync.Mutex
	tape     []events.Event
	tapeSet  bool
	pins     map[string]string
	errs     []error
	clients  []*runClient
	requests []sentRequest
	misses   []*cassettes.MissError
}

func newRun(index int, bubble bool, rc *resolved) *Run {
	return &Run{index: index, bubble: bubble, rc: rc, rec: events.NewRecorder(rc.Recorder)}
}

// Index is the 0-based number of the run. It exists for logging and for
// tests of the harness itself: a scenario must not let it influence the
// outcome.
func (r *Run) Index() int { return r.index }

// Recorder returns the run's event recorder: the tape the harness compares
// is what it recorded, unless the scenario hands over a tape recorded
// elsewhere with SetEvents. Its clock and ID source come from
// Config.Recorder.
func (r *Run) Recorder() *events.Recorder { return r.rec }

// SetEvents makes evs the run's tape instead of what Recorder recorded,
// for a pipeline that keeps its own recorder and returns its events.
func (r *Run) SetEvents(evs []events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tape, r.tapeSet = evs, true
}

// Pin records one named input the run's outcome depends on (a cassette
// digest, a model name, a configuration digest). The report's Key is the
// digest of all pins (see Key); runs that report different pins diverge.
// Pinning a name twice with different values fails the run.
func (r *Run) Pin(name, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.pins[name]; ok && old != value {
		r.errs = append(r.errs, fmt.Errorf("%w: pin %q set to %q and then to %q in the same run", errPinConflict, name, old, value))
		return
	}
	if r.pins == nil {
		r.pins = map[string]string{}
	}
	r.pins[name] = value
}

// errPinConflict: a run pinned one name to two values.
var errPinConflict = errors.New("conflicting pin")

// Client opens the cassette at path (package cassettes, replay only, its
// manifest verified) for this run alone and returns an *http.Client that
// replays it. The harness closes the cassette when the run ends: the run
// fails if a request missed the cassette (or found it exhausted), even if
// the scenario swallowed the error, and if recorded interactions were left
// unused. Inside a synctest bubble every response takes a run-dependent
// amount of fake time (Config.Latency). The client's transport reports
// the cassette's digest through a CassetteID() string method.
func (r *Run) Client(path string) (*http.Client, error) {
	c, err := openRunClient(r, path)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.clients = append(r.clients, c)
	r.mu.Unlock()
	return &http.Client{Transport: c}, nil
}

// noteRequest records a request sent through a run client and returns
// its index.
func (r *Run) noteRequest(s sentRequest) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, s)
	return len(r.requests) - 1
}

// noteMiss marks request i as one that missed the cassette, as m says.
func (r *Run) noteMiss(i int, m *cassettes.MissError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[i].Missed = true
	r.requests[i].Change = m.Change()
	r.misses = append(r.misses, m)
}

// finish closes the run's cassettes and returns what the harness keeps of
// the run: the tape, the pins, the requests, the misses, and the
// scenario's error joined with every error the run met besides it (a
// cassette miss the scenario swallowed, unused interactions, a pin
// conflict).
func (r *Run) finish(scenarioErr error) (tape []events.Event, pins map[string]string, requests []sentRequest, misses []*cassettes.MissError, err error) {
	r.mu.Lock()
	clients := r.clients
	r.clients = nil
	r.mu.Unlock()
	errs := []error{scenarioErr}
	for _, c := range clients {
		miss, cerr := c.finish()
		if miss != nil && !errors.Is(scenarioErr, cassettes.ErrInteractionNotFound) {
			errs = append(errs, miss)
		}
		errs = append(errs, cerr)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tape = r.tape
	if !r.tapeSet {
		// Forks the scenario left open (it returned early, say) are
		// joined, so their lanes' events are compared too.
		r.rec.JoinOpen()
		tape = r.rec.Events()
	}
	errs = append(errs, r.errs...)
	return tape, maps.Clone(r.pins), r.requests, r.misses, joinErrors(errs)
}

// Key returns the hex blake3-256 of the canonical JSON (events.Canonical)
// of the pin map, or "" for no pins. For the five components of the
// fallback pipeline's RunKey (cassette_id, store_digest,
// repo_snapshot_sha, embedding_model_digest, config_digest) it equals
// RunKey.String().
func Key(pin map[string]string) string {
	if len(pin) == 0 {
		return ""
	}
	b, err := events.Canonical(pin)
	if err != nil {
		// Unreachable: a map of strings always encodes.
		panic("harness: pin encoding: " + err.Error())
	}
	return events.Sum(b).String()
}

// joinErrors is errors.Join, except that a single error is returned as it
// is, so its kind is its own.
func joinErrors(errs []error) error {
	var nonNil []error
	for _, e := range errs {
		if e != nil {
			nonNil = append(nonNil, e)
		}
	}
	if len(nonNil) == 1 {
		return nonNil[0]
	}
	return errors.Join(nonNil...)
}
