package cassettes

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// Mode is how a cassette is opened.
type Mode int

const (
	// Replay serves recorded interactions and never touches the network.
	// It is the zero value.
	Replay Mode = iota
	// Record sends requests through Config.RealTransport and saves the
	// redacted interactions on Close.
	Record
)

func (m Mode) String() string {
	switch m {
	case Replay:
		return "replay"
	case Record:
		return "record"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Config configures Open. The zero value replays a cassette (or records
// it, when the test flags say so), verifying it against the manifest next
// to it if there is one, and makes unused interactions an error at Close.
type Config struct {
	// Mode is Replay (the default) or Record. The test flags
	// -cassettes.record and -cassettes.record-missing turn Replay into
	// Record for the cassettes they select.
	Mode Mode

	// RealTransport sends requests when recording; nil means
	// http.DefaultTransport. Use Redirect to record against a local fake
	// or a proxy while the cassette keeps the API's URL. Replay never
	// uses it.
	RealTransport http.RoundTripper

	// APIKey is the key used for recording: a cassette that contains it
	// is never saved, and never opened. It is masked wherever it appears
	// in error messages.
	APIKey string

	// AllowUnused makes Close accept recorded interactions that were
	// never replayed.
	AllowUnused bool

	// Manifest is the manifest to verify the cassette against in Replay
	// mode. Empty means manifest.json in the cassette's directory, if that
	// file exists; with no manifest the digest is computed but not checked.
	Manifest string

	// ReplayOnly makes Open replay, whatever Mode and the test flags say:
	// a determinism gate records a cassette in its first run (when a test
	// flag selects it) and replays it in the others.
	ReplayOnly bool

	// Timing says when a replayed event stream recorded with frame
	// offsets delivers each frame: the zero value, TimingAuto, at its
	// recorded offset inside a testing/synctest bubble (on its fake clock)
	// and at once outside; TimingOn in wall time outside a bubble too;
	// TimingOff always at once. See Streaming in the package
	// documentation.
	Timing Timing

	// Latency, when set, is how long a replayed response takes, given the
	// duration its recording measured (go-vcr's duration field, 0 when the
	// cassette has none), where Timing paces: inside a synctest bubble by
	// default. A response is returned after Latency(d); an event stream
	// whose duration was measured is returned at once and its frames
	// arrive at their recorded offsets scaled by Latency(d)/d. A wait
	// cancelled by the request's context gives the interaction back, as a
	// cancelled read does. nil keeps the recording's own timing: responses
	// at once, frames at their offsets.
	Latency func(recorded time.Duration) time.Duration

	// Hint is the command errors name to re-record the cassette. Empty
	// means the go test line that re-records it from the test that opened
	// it (known to OpenT); with neither, a miss and unused interactions
	// name no command, and the other errors describe that line.
	Hint string

	testName string // set by OpenT
	// createTemp is a test seam for atomic writes.
	createTemp func(dir, pattern string) (tempFile, error)
	// skipSecretCheck (tests only) opens a cassette that holds a secret
	// on purpose.
	skipSecretCheck bool
	// replayable (benchmarks only) lets every interaction replay any
	// number of times, so lookups can be measured without reopening.
	replayable bool
}

// Cassette is one cassette file opened for replay or recording. It is safe
// for concurrent use.
type Cassette struct {
	path    string
	cfg     Config
	hint    string // rerecordHint
	command string // rerecordCommand
	mode    Mode
	tr      *cassetteTransport
	client  *http.Client

	mu     sync.Mutex
	closed bool
	id     string

	// Replay.
	p        *parsed
	state    []servedState // per interaction
	assigned assignment

	// Record.
	rec *recording

	// The misses so far: those that differed from their recording only
	// in the API version (versionChange is the first one's), the others.
	versionMisses, otherMisses int
	versionChange              string
}

// cassetteTransport is the cassette's http.RoundTripper. CassetteID lets
// code that only holds an *http.Client discover which cassette serves it.
type cassetteTransport struct{ c *Cassette }

// CassetteID returns the cassette's digest (cassette_id): in Replay mode
// from Open on, in Record mode once Close has saved it ("" before).
func (t *cassetteTransport) CassetteID() string { return t.c.ID() }

// RoundTrip replays or records one request.
func (t *cassetteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.c.mode == Record {
		return t.c.record(req)
	}
	return t.c.replay(req)
}

// Open opens the cassette at path, which must end in ".yaml" (go-vcr's
// naming). In Replay mode the file must exist, parse as a go-vcr format-2
// cassette, hold no credential, and match its manifest entry; in Record
// mode nothing is read and the file is written on Close.
func Open(path string, cfg Config) (*Cassette, error) {
	if !strings.HasSuffix(path, ".yaml") {
		return nil, newErr(path, 0, "open", errors.New("cassette path must end in .yaml"))
	}
	if err := refreshRun.noteOpen(path); err != nil {
		return nil, newErr(path, 0, "open", err)
	}
	mode, err := modeFor(path, cfg.Mode)
	if cfg.ReplayOnly {
		mode, err = Replay, nil
	}
	if err == nil && mode == Record && cfg.Mode != Record {
		mode, err = claimRecording(path, cfg.testName)
	}
	if err != nil {
		return nil, newErr(path, 0, "open", err)
	}
	c := &Cassette{path: path, cfg: cfg, mode: mode, hint: rerecordHint(path, cfg), command: rerecordCommand(path, cfg)}
	c.tr = &cassetteTransport{c: c}
	c.client = &http.Client{Transport: c.tr}
	switch mode {
	case Replay:
		// A refresh's staged copy, recorded by this process or replayed to
		// check it, is no manifest's: it is scanned whole.
		read, staged := refreshRun.stagedCopy(path)
		if !staged {
			read = path
		}
		p, err := readCassette(read, c.hint)
		if err != nil {
			return nil, err
		}
		vouched := false
		if !staged {
			if vouched, err = c.verifyManifest(p); err != nil {
				return nil, err
			}
		}
		if err := secretError(p, "open", cfg.APIKey, c.hint, !vouched); err != nil && !cfg.skipSecretCheck {
			return nil, err
		}
		c.p, c.id = p, p.digest.String()
		c.state = make([]servedState, len(p.c.Interactions))
	case Record:
		c.rec = newRecording(c)
	default:
		return nil, newErr(path, 0, "open", fmt.Errorf("unknown mode %v", cfg.Mode))
	}
	return c, nil
}

// OpenT opens the cassette at path for the test t, as Open does, and
// closes it when t ends. Any error fails the test. Errors name the go test
// line that re-records the cassette from t.
func OpenT(t testing.TB, path string, cfg Config) *Cassette {
	t.Helper()
	cfg.testName = t.Name()
	c, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Notes() {
		t.Log(n)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// exists reports whether path exists, for -cassettes.record-missing.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// Path returns the cassette's file path.
func (c *Cassette) Path() string { return c.path }

// Mode returns the mode the cassette was opened in, after the test flags.
func (c *Cassette) Mode() Mode { return c.mode }

// ID returns the cassette_id, as the transport's CassetteID method does.
func (c *Cassette) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// Notes returns what Open accepted but a reader should know, once per
// cassette, such as the Content-Type it infers for responses recorded
// without one. OpenT logs them.
func (c *Cassette) Notes() []string {
	if c.p == nil {
		return nil
	}
	return inferredNotes(c.path, c.p.resps)
}

// Client returns an *http.Client whose transport is the cassette.
func (c *Cassette) Client() *http.Client { return c.client }

// Transport returns the cassette's RoundTripper. Its CassetteID() string
// method returns the cassette's digest (cassette_id): in Replay mode from
// Open on, in Record mode once Close has saved it ("" before).
func (c *Cassette) Transport() http.RoundTripper { return c.tr }

// Interactions returns the number of interactions: recorded in the file in
// Replay mode, captured so far in Record mode.
func (c *Cassette) Interactions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p != nil {
		return len(c.p.c.Interactions)
	}
	return len(c.rec.captured)
}

// Close ends the cassette. In Replay mode it reports recorded interactions
// that were never replayed (unless Config.AllowUnused). In Record mode it
// redacts the captured interactions, scans the serialized bytes for
// secrets, and writes the file atomically; on any error the previous file
// is left as it was. Closing twice returns nil.
func (c *Cassette) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.mode == Record {
		return c.rec.save()
	}
	if c.cfg.AllowUnused {
		return nil
	}
	var lines []string
	first := 0
	for i, s := range c.state {
		if s.started {
			continue
		}
		if len(lines) == 0 {
			first = c.p.lines[i]
		}
		in := c.p.c.Interactions[i]
		lines = append(lines, fmt.Sprintf("interaction %d (line %d): %s %s", i, c.p.lines[i], in.Request.Method, redactURL(in.Request.URL)))
	}
	if len(lines) == 0 {
		return nil
	}
	why := "the code under test made fewer or different requests than when the cassette was recorded"
	if c.command != "" {
		why += "; fix it, or re-record with: " + c.command
	}
	if c.versionMisses > 0 && c.otherMisses == 0 {
		why = "every request that missed differed from its recording only in the API version its SDK sends, as its miss says"
	}
	return newErr(c.path, first, "close", detailf(ErrUnusedInteractions,
		"%v: %d of %d never replayed:\n  %s\n%s", ErrUnusedInteractions, len(lines), len(c.state), strings.Join(lines, "\n  "), why))
}

// interaction returns recorded interaction i.
func (c *Cassette) interaction(i int) *cassette.Interaction { return c.p.c.Interactions[i] }
