package cassettes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/jsondiff"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/dnaeon/go-vcr.v3/recorder"
	"gopkg.in/yaml.v3"

	"github.com/codegenie/codegenie/guard"
)

// Mode is how a cassette is opened.
type Mode int

const (
	// Replay serves recorded interactions and never touches the network.
	// It is the zero value and the only mode tests use.
	Replay Mode = iota
	// Record sends requests through Options.RealTransport and saves the
	// redacted interactions on Close. It is for the cassette steward.
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

// ManifestName is the file name of the manifest Open looks for next to a
// cassette when Options.Manifest is empty.
const ManifestName = "manifest.json"

// Options configures Open. The zero value replays a cassette, verifying it
// against the manifest next to it if there is one, and makes unused
// interactions an error at Close.
type Options struct {
	// Mode is Replay (the default) or Record.
	Mode Mode

	// RealTransport sends requests in Record mode; it is required there
	// and ignored in Replay mode.
	RealTransport http.RoundTripper

	// APIKey is the key used for recording: the secret scanner refuses
	// to save a cassette that contains it. In either mode it is also
	// masked in error messages.
	APIKey string

	// AllowUnused makes Close accept recorded interactions that were
	// never replayed.
	AllowUnused bool

	// Manifest is the manifest to verify the cassette against in Replay
	// mode. Empty means ManifestName in the cassette's directory, if that
	// file exists; with no manifest the digest is computed but not checked.
	Manifest string

	// Scenario names the cassette for refresh-cassettes' -run flag
	// ("scenario/path"); it only shapes the refresh command that errors
	// suggest. Empty means derived from a FileName-shaped path
	// ("<scenario>.<path>.yaml"), else the command selects everything.
	Scenario string

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
	opts    Options
	refresh string
	rec     *recorder.Recorder
	tr      *Transport
	client  *http.Client
	// fallback is go-vcr's real transport in Replay mode: guard.Transport(),
	// which can never connect. go-vcr in ModeReplayOnly does not call it;
	// if it ever did, the request would fail with a *guard.ReplayModeError
	// naming the host, and the dial would be reported to the
	// guard.CountingDialer in the request's context.
	fallback http.RoundTripper

	mu     sync.Mutex
	closed bool
	id     string

	// Replay.
	p          *parsed
	index      map[key][]int    // key -> interactions, in file order
	rawIndex   map[string][]int // raw request body -> interactions
	served     []bool
	lastServed int                   // set by go-vcr's BeforeResponseReplayHook
	target     *cassette.Interaction // read by matchTarget

	// Record.
	recorded []*cassette.Interaction
}

// Transport is the cassette's http.RoundTripper. CassetteID lets code that
// only holds an *http.Client discover which cassette serves it.
type Transport struct{ c *Cassette }

// CassetteID returns the cassette's digest (cassette_id): in Replay mode
// from Open on, in Record mode once Close has saved it ("" before).
func (t *Transport) CassetteID() string { return t.c.ID() }

// RoundTrip replays or records one request.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.c.opts.Mode == Record {
		return t.c.record(req)
	}
	return t.c.replay(req)
}

func refreshCommand(scenario string) string {
	if scenario == "" {
		return "go run ./cmd/refresh-cassettes"
	}
	return "go run ./cmd/refresh-cassettes -run '^" + regexp.QuoteMeta(scenario) + "$'"
}

// Open opens the cassette at path, which must end in ".yaml" (go-vcr
// appends that suffix to cassette names). In Replay mode the file must
// exist, parse as a go-vcr format-2 cassette, and match its manifest entry;
// in Record mode nothing is read and the file is written on Close.
func Open(path string, opts Options) (*Cassette, error) {
	if !strings.HasSuffix(path, ".yaml") {
		return nil, newErr(path, 0, "open", fmt.Errorf("cassette path must end in .yaml"))
	}
	scenario := opts.Scenario
	if scenario == "" && strings.Count(filepath.Base(path), ".") == 2 {
		scenario = scenarioKey(filepath.Base(path))
	}
	c := &Cassette{path: path, opts: opts, refresh: refreshCommand(scenario), lastServed: -1}
	c.tr = &Transport{c: c}
	c.client = &http.Client{Transport: c.tr}
	name := strings.TrimSuffix(path, ".yaml")
	switch opts.Mode {
	case Replay:
		p, err := readCassette(path, c.refresh)
		if err != nil {
			return nil, err
		}
		if err := c.verifyManifest(p); err != nil {
			return nil, err
		}
		if err := secretError(p, "open", c.opts.APIKey, c.refresh); err != nil && !opts.skipSecretCheck {
			return nil, err
		}
		c.fallback = guard.Transport()
		rec, err := recorder.NewWithOptions(&recorder.Options{
			CassetteName:       name,
			Mode:               recorder.ModeReplayOnly,
			RealTransport:      c.fallback,
			SkipRequestLatency: true,
		})
		if err != nil {
			return nil, newErr(path, 0, "open", err)
		}
		rec.SetMatcher(c.matchTarget)
		rec.SetReplayableInteractions(opts.replayable)
		rec.AddHook(func(i *cassette.Interaction) error {
			c.lastServed = i.ID // c.mu is held by replay
			return nil
		}, recorder.BeforeResponseReplayHook)
		c.rec, c.p, c.id = rec, p, p.digest.String()
		c.served = make([]bool, len(p.c.Interactions))
		c.index = make(map[key][]int, len(p.keys))
		c.rawIndex = make(map[string][]int, len(p.keys))
		for i, k := range p.keys {
			c.index[k] = append(c.index[k], i)
			body := p.c.Interactions[i].Request.Body
			c.rawIndex[body] = append(c.rawIndex[body], i)
		}
	case Record:
		if opts.RealTransport == nil {
			return nil, newErr(path, 0, "open", errors.New("record mode needs Options.RealTransport"))
		}
		rec, err := recorder.NewWithOptions(&recorder.Options{
			CassetteName:  name,
			Mode:          recorder.ModeRecordOnly,
			RealTransport: opts.RealTransport,
		})
		if err != nil {
			return nil, newErr(path, 0, "open", err)
		}
		rec.AddHook(c.captured, recorder.AfterCaptureHook)
		c.rec = rec
	default:
		return nil, newErr(path, 0, "open", fmt.Errorf("unknown mode %v", opts.Mode))
	}
	return c, nil
}

// Path returns the cassette's file path.
func (c *Cassette) Path() string { return c.path }

// ID returns the cassette_id (see Transport.CassetteID).
func (c *Cassette) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// Client returns an *http.Client whose transport is the cassette.
func (c *Cassette) Client() *http.Client { return c.client }

// Transport returns the cassette's RoundTripper (a *Transport).
func (c *Cassette) Transport() http.RoundTripper { return c.tr }

// Interactions returns the number of interactions: recorded in the file in
// Replay mode, captured so far in Record mode.
func (c *Cassette) Interactions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.p != nil {
		return len(c.p.c.Interactions)
	}
	return len(c.recorded)
}

// Close ends the cassette. In Replay mode it reports recorded interactions
// that were never replayed (unless Options.AllowUnused). In Record mode it
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
	if c.opts.Mode == Record {
		return c.save()
	}
	if c.opts.AllowUnused {
		return nil
	}
	var lines []string
	first := 0
	for i, used := range c.served {
		if used {
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
	return newErr(c.path, first, "close", detailf(ErrUnusedInteractions,
		"%v: %d of %d never replayed:\n  %s\nthe pipeline made fewer or different requests than when the cassette was recorded; fix the pipeline, or re-record with: %s",
		ErrUnusedInteractions, len(lines), len(c.served), strings.Join(lines, "\n  "), c.refresh))
}

// matchTarget is the go-vcr matcher: it accepts exactly the recorded
// request replay chose by key (c.target). go-vcr calls it from inside
// replay's call to the recorder, while c.mu is held.
func (c *Cassette) matchTarget(_ *http.Request, i cassette.Request) bool {
	t := c.target
	if t == nil {
		return false
	}
	if i.Method != t.Request.Method || i.URL != t.Request.URL || len(i.Body) != len(t.Request.Body) || i.Body != t.Request.Body {
		return false
	}
	for _, h := range matchHeaders {
		if !slices.Equal(i.Headers.Values(h), t.Request.Headers.Values(h)) {
			return false
		}
	}
	return true
}

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
	cr, err := canonicalHead(req.Method, req.URL.String(), req.Header)
	if err != nil {
		return nil, newErr(c.path, 0, "replay", err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, newErr(c.path, 0, "replay", ErrClosed)
	}
	// Fast path: a recorded body with the same bytes has the same canonical
	// body, so its key is ours if the head agrees.
	var candidates []int
	for _, i := range c.rawIndex[string(body)] {
		if sameHead(c.p.canon[i], cr) {
			candidates = c.index[c.p.keys[i]]
			break
		}
	}
	if candidates == nil {
		cr.setBody(body)
		candidates = c.index[cr.key()]
	}
	target := -1
	for _, i := range candidates {
		if !c.served[i] {
			target = i
			break
		}
	}
	if target < 0 {
		cr.setBody(body)
		return nil, c.miss(cr, candidates)
	}
	in := c.p.c.Interactions[target]
	r2 := req.WithContext(req.Context()) // shallow: go-vcr only reads it
	r2.Body = io.NopCloser(bytes.NewReader(body))
	c.lastServed, c.target = -1, in
	resp, err := c.rec.RoundTrip(r2)
	c.target = nil
	if c.lastServed == in.ID {
		// go-vcr marked it replayed (even if the context ended just after).
		c.served[target] = !c.opts.replayable
	}
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, newErr(c.path, c.p.lines[target], "replay", err)
	}
	resp.Body.Close()
	if c.lastServed != in.ID {
		return nil, newErr(c.path, c.p.lines[target], "replay",
			fmt.Errorf("go-vcr served interaction %d, expected %d; the file changed while it was being opened", c.lastServed, in.ID))
	}
	return responseFor(req, &in.Response), nil
}

// responseFor builds a fresh response from a recorded one: the caller gets
// its own header maps and its own body reader, so concurrent replays share
// nothing mutable.
func responseFor(req *http.Request, r *cassette.Response) *http.Response {
	cl := r.ContentLength
	if cl >= 0 && cl != int64(len(r.Body)) {
		cl = -1
	}
	h := cloneValues(r.Headers)
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		Status:           r.Status,
		StatusCode:       r.Code,
		Proto:            r.Proto,
		ProtoMajor:       r.ProtoMajor,
		ProtoMinor:       r.ProtoMinor,
		TransferEncoding: slices.Clone(r.TransferEncoding),
		Trailer:          cloneValues(r.Trailer),
		ContentLength:    cl,
		Uncompressed:     r.Uncompressed,
		Header:           h,
		Body:             newReplayBody(req.Context(), r.Body, isSSE(h)),
		Close:            true,
		Request:          req,
	}
}

func (c *Cassette) miss(cr *canonRequest, exhausted []int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s %s (body blake3 %s)", ErrInteractionNotFound, cr.method, redactURL(cr.url), cr.bodyDigest())
	line := 0
	if len(exhausted) > 0 {
		line = c.p.lines[exhausted[len(exhausted)-1]]
		fmt.Fprintf(&b, "\nall %d recorded interactions with this key were already replayed (the last at line %d): the pipeline sent this request more often than when the cassette was recorded", len(exhausted), line)
	} else if n := c.nearest(cr); n >= 0 {
		line = c.p.lines[n]
		rc := c.p.canon[n]
		fmt.Fprintf(&b, "\nnearest recorded interaction: %d (line %d): %s %s (body blake3 %s)", n, line, rc.method, redactURL(rc.url), rc.bodyDigest())
		if rc.method != cr.method {
			fmt.Fprintf(&b, "\n  method: recorded %s, requested %s", rc.method, cr.method)
		}
		if rc.url != cr.url {
			fmt.Fprintf(&b, "\n  url: recorded %s, requested %s", redactURL(rc.url), redactURL(cr.url))
		}
		for j := range rc.headers {
			if rc.headers[j] != cr.headers[j] {
				fmt.Fprintf(&b, "\n  header: recorded %s, requested %s", rc.headers[j], cr.headers[j])
			}
		}
		if !bytes.Equal(rc.body, cr.body) {
			// Mask whole bodies before any excerpt: an excerpt can start
			// inside a secret, where no rule would recognise it.
			recBody := []byte(maskSecrets(string(rc.body), c.opts.APIKey))
			reqBody := []byte(maskSecrets(string(cr.body), c.opts.APIKey))
			diff := jsondiff.Lines(recBody, reqBody)
			if diff == nil {
				off, _ := excerpt.FirstDiff(recBody, reqBody)
				diff = []string{fmt.Sprintf("(body) differs at byte %d: recorded %s, requested %s", off,
					excerpt.Around(recBody, off, excerpt.Radius), excerpt.Around(reqBody, off, excerpt.Radius))}
			}
			const maxLines = 20
			if len(diff) > maxLines {
				diff = append(diff[:maxLines:maxLines], fmt.Sprintf("... and %d more differences", len(diff)-maxLines))
			}
			fmt.Fprintf(&b, "\n  body (recorded vs requested):\n    %s", strings.Join(diff, "\n    "))
		}
	} else {
		b.WriteString("\nthe cassette has no interactions")
	}
	fmt.Fprintf(&b, "\nif the request change is intended, re-record with: %s", c.refresh)
	msg := maskSecrets(b.String(), c.opts.APIKey)
	return newErr(c.path, line, "replay", &detailError{sentinel: ErrInteractionNotFound, msg: msg})
}

// nearest picks the recorded request most like cr: same method and URL
// first, then the fewest differing body fields, then file order.
func (c *Cassette) nearest(cr *canonRequest) int {
	best, bestScore := -1, 0
	for i, rc := range c.p.canon {
		score := 0
		if rc.method != cr.method {
			score += 1 << 20
		}
		if rc.url != cr.url {
			score += 1 << 19
		}
		for j := range rc.headers {
			if rc.headers[j] != cr.headers[j] {
				score += 1 << 18
			}
		}
		if !bytes.Equal(rc.body, cr.body) {
			d := len(jsondiff.Lines(rc.body, cr.body))
			if d == 0 {
				d = 1 << 10
			}
			score += min(d, 1<<17)
		}
		if best < 0 || score < bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// captured is the AfterCaptureHook in Record mode: the interaction gets
// its own header maps, so neither the live request nor the response the
// caller receives shares a map with what will be saved.
func (c *Cassette) captured(i *cassette.Interaction) error {
	i.Request.Headers = cloneValues(i.Request.Headers)
	i.Request.Trailer = cloneValues(i.Request.Trailer)
	i.Response.Headers = cloneValues(i.Response.Headers)
	i.Response.Trailer = cloneValues(i.Response.Trailer)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return newErr(c.path, 0, "record", ErrClosed)
	}
	c.recorded = append(c.recorded, i)
	return nil
}

func (c *Cassette) record(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, newErr(c.path, 0, "record", ErrClosed)
	}
	resp, err := c.rec.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	out := *resp
	out.Header = cloneValues(resp.Header)
	out.Trailer = cloneValues(resp.Trailer)
	out.Request = req
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out.Body = newReplayBody(req.Context(), string(b), isSSE(out.Header))
	return &out, nil
}

// save serializes the redacted interactions exactly as go-vcr's
// Cassette.Save does, scans the bytes, and writes them atomically.
func (c *Cassette) save() error {
	cs := cassette.New(strings.TrimSuffix(c.path, ".yaml"))
	for _, i := range c.recorded {
		cs.AddInteraction(redactInteraction(i))
	}
	data, err := yaml.Marshal(cs)
	if err != nil {
		return newErr(c.path, 0, "save", err)
	}
	data = append([]byte("---\n"), data...)
	p, err := parseCassette(c.path, data)
	if err != nil {
		return err
	}
	if f := findSecret(p, c.opts.APIKey); f != nil {
		return newErr(c.path, f.line, "save", detailf(ErrSecret,
			"%v: %s at line %d of the serialized cassette survived redaction (the value is not shown); nothing was written. Keep credentials out of request and response bodies and headers, then re-record",
			ErrSecret, f.what, f.line))
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return newErr(c.path, 0, "write", err)
	}
	if err := writeFileAtomic(c.path, data, c.opts.createTemp); err != nil {
		return err
	}
	c.id = p.digest.String()
	return nil
}
