package cassettes

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/manifest"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/dnaeon/go-vcr.v3/recorder"
	"gopkg.in/yaml.v3"
)

// recording is the Record-mode half of a Cassette: go-vcr's recorder in
// ModeRecordOnly and the interactions it captured.
type recording struct {
	c        *Cassette
	once     sync.Once
	rec      *recorder.Recorder
	err      error
	captured []*cassette.Interaction // guarded by c.mu
	failed   error                   // the first transport error; guarded by c.mu
	undo     *undo                   // what save replaced; guarded by c.mu
}

func newRecording(c *Cassette) *recording { return &recording{c: c} }

// recorder makes go-vcr's recorder on first use.
func (r *recording) recorder() (*recorder.Recorder, error) {
	r.once.Do(func() {
		r.rec, r.err = recorder.NewWithOptions(&recorder.Options{
			CassetteName:  strings.TrimSuffix(r.c.path, ".yaml"),
			Mode:          recorder.ModeRecordOnly,
			RealTransport: timedTransport{withoutLane{realTransport(r.c.cfg)}},
		})
		if r.err == nil {
			r.rec.AddHook(r.capture, recorder.AfterCaptureHook)
		}
	})
	return r.rec, r.err
}

// capture is the AfterCaptureHook: the interaction gets its own header
// maps, so neither the live request nor the response the caller receives
// shares a map with what will be saved, and the duration timedTransport
// measured in real time.
func (r *recording) capture(i *cassette.Interaction) error {
	i.Request.Headers = cloneValues(i.Request.Headers)
	i.Request.Trailer = cloneValues(i.Request.Trailer)
	i.Response.Headers = cloneValues(i.Response.Headers)
	i.Response.Trailer = cloneValues(i.Response.Trailer)
	i.Response.Duration = takeDuration(http.Header(i.Response.Headers))
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if r.c.closed {
		return newErr(r.c.path, 0, "record", errClosed)
	}
	r.captured = append(r.captured, i)
	return nil
}

func (c *Cassette) record(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, newErr(c.path, 0, "record", errClosed)
	}
	rec, err := c.rec.recorder()
	if err != nil {
		return nil, newErr(c.path, 0, "record", err)
	}
	resp, err := rec.RoundTrip(withLane(req))
	if err != nil {
		if req.Context().Err() == nil {
			// Not the caller giving up: the recording is incomplete.
			c.mu.Lock()
			if c.rec.failed == nil {
				c.rec.failed = err
			}
			c.mu.Unlock()
		}
		return nil, err
	}
	out := *resp
	out.Header = cloneValues(resp.Header)
	out.Trailer = cloneValues(resp.Trailer)
	out.Request = req
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out.Body = newReplayBody(req.Context(), string(b), framingOf(out.Header, string(b)))
	return &out, nil
}

// save serializes the redacted interactions exactly as go-vcr's
// Cassette.Save does, scans the bytes, and writes them atomically: through
// Apply when a manifest lists the directory's cassettes and the recording
// was asked for with a test flag, else in place. A recording that met a
// transport error, or captured no interaction, is not written: it would
// replace a good cassette with a worse one. c.mu is held.
func (r *recording) save() error {
	c := r.c
	defer endRecording(c.path)
	if r.failed != nil || len(r.captured) == 0 {
		who, kept := "the recording", "no file was written"
		if c.cfg.testName != "" {
			who = c.cfg.testName + "'s recording"
		}
		if exists(c.path) {
			kept = "the existing cassette is left as it was"
		}
		why := "captured no interaction (no request was sent through the cassette's client)"
		if r.failed != nil {
			why = "failed: " + maskSecrets(r.failed.Error(), c.cfg.APIKey)
		}
		return newErr(c.path, 0, "save", fmt.Errorf("not saved: %s %s; %s. Fix the cause (Config.RealTransport, cassettes.Redirect to a local fake, the network), then record again with: %s",
			who, why, kept, c.hint))
	}
	cs := cassette.New(strings.TrimSuffix(c.path, ".yaml"))
	for _, i := range inStableOrder(r.captured) {
		cs.AddInteraction(redactInteraction(i))
	}
	data, p, err := c.encode(cs)
	if err != nil {
		return err
	}
	// Timing measured again that is only noise keeps the recording's
	// (see keepTiming), so an unchanged re-record writes the same bytes.
	if ref, err := readCassette(c.path, ""); err == nil && keepTiming(ref, p, cs) {
		if data, p, err = c.encode(cs); err != nil {
			return err
		}
	}
	if f := findSecret(p, c.cfg.APIKey, true); f != nil {
		return newErr(c.path, f.line, "save", detailf(errSecret,
			"%v: %s at line %d of the serialized cassette survived redaction (the value is not shown); nothing was written. Keep credentials out of request and response bodies and headers, then re-record",
			errSecret, f.what, f.line))
	}
	if err := r.write(data); err != nil {
		return err
	}
	c.id = p.digest.String()
	return nil
}

// encode serializes cs exactly as go-vcr's Cassette.Save does, and parses
// the bytes back as Open would.
func (c *Cassette) encode(cs *cassette.Cassette) ([]byte, *parsed, error) {
	data, err := yaml.Marshal(cs)
	if err != nil {
		return nil, nil, newErr(c.path, 0, "save", err)
	}
	data = append([]byte("---\n"), data...)
	p, err := parseCassette(c.path, data, c.hint)
	if err != nil {
		return nil, nil, err
	}
	return data, p, nil
}

// write puts a recording's bytes in place: through Apply, holding the
// directory's refresh lock from staging to applying, when a manifest
// lists the directory's cassettes and the recording was asked for with a
// test flag; else in place, atomically.
func (r *recording) write(data []byte) (err error) {
	c := r.c
	if s, ok := refreshRun.staged(c.path); ok {
		// A refresh records into its staging directory: the module's
		// cassette and manifest are left as they are.
		if err := os.MkdirAll(filepath.Dir(s), 0o755); err != nil {
			return newErr(s, 0, "write", err)
		}
		u := &undo{path: s, staged: true, cassette: previous(s), wrote: events.Sum(data)}
		if err := writeFileAtomic(s, data, c.cfg.createTemp); err != nil {
			return err
		}
		r.undo = u
		return nil
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return newErr(c.path, 0, "write", err)
	}
	_, merr := os.Stat(filepath.Join(dir, manifest.Name))
	if c.cfg.Mode != Replay || c.cfg.Manifest != "" || errors.Is(merr, fs.ErrNotExist) {
		u := &undo{path: c.path, cassette: previous(c.path), wrote: events.Sum(data)}
		if err := writeFileAtomic(c.path, data, c.cfg.createTemp); err != nil {
			return err
		}
		r.undo = u
		return nil
	}
	l, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer func() {
		// Removes the staging folder if nothing was applied.
		if uerr := l.Unlock(); uerr != nil && err == nil {
			err = uerr
		}
	}()
	mpath := filepath.Join(dir, manifest.Name)
	u := &undo{path: c.path, cassette: previous(c.path), manifest: previous(mpath), wrote: events.Sum(data)}
	if err := applyOne(l, filepath.Base(c.path), data, responseDate(r.captured)); err != nil {
		return err
	}
	if m := previous(mpath); m != nil {
		u.wroteManifest = events.Sum(m.data)
		r.undo = u
	}
	return nil
}

// inStableOrder returns the captured interactions sorted by what was
// asked (method, canonical URL, canonical body, meaningful headers), then
// by the lane that asked (laneHeader), and in arrival order among
// identical requests of one lane: so a concurrent pipeline recorded again
// unchanged gives the same bytes, and a changed request moves only its
// own lines.
func inStableOrder(captured []*cassette.Interaction) []*cassette.Interaction {
	type keyed struct {
		i  *cassette.Interaction
		cr *canonRequest
	}
	ks := make([]keyed, len(captured))
	for n, i := range captured {
		u, err := url.Parse(i.Request.URL)
		if err != nil {
			u = &url.URL{Path: i.Request.URL}
		}
		cr := canonicalHead(i.Request.Method, u, http.Header(i.Request.Headers), nil)
		cr.setBody([]byte(i.Request.Body))
		ks[n] = keyed{i, cr}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		return cmp.Or(
			strings.Compare(a.cr.method, b.cr.method),
			strings.Compare(a.cr.url, b.cr.url),
			bytes.Compare(a.cr.body, b.cr.body),
			slices.Compare(a.cr.headers, b.cr.headers),
			strings.Compare(recordedLane(a.i.Request.Headers), recordedLane(b.i.Request.Headers)),
		)
	})
	out := make([]*cassette.Interaction, len(ks))
	for n, k := range ks {
		out[n] = k.i
	}
	return out
}

// applyOne records one cassette re-recorded by a test flag into the
// manifest of its directory, through a staging folder and Apply, under l.
func applyOne(l *DirLock, file string, data []byte, recorded time.Time) error {
	stage, err := l.NewStage()
	if err != nil {
		return err
	}
	staged := filepath.Join(stage, file)
	if err := writeFileAtomic(staged, data, nil); err != nil {
		return err
	}
	return l.apply([]Update{{File: file, Staged: staged, Force: true, Reason: "re-recorded with go test -" + RecordFlag, RecordedAt: recorded}}, "")
}

// Redirect returns a RoundTripper for recording against a local fake or a
// proxy: requests whose URL starts with the API root from (scheme, host
// and path prefix) are sent to the root to instead, through next
// (http.DefaultTransport when nil); others go to next unchanged. The
// cassette records each request as the client made it, so it names from
// and replays against the real API's URL, whatever port the fake had. A
// failure names the URL that was dialled.
func Redirect(from, to string, next http.RoundTripper) (http.RoundTripper, error) {
	f, err := url.Parse(from)
	if err != nil || f.Scheme == "" || f.Host == "" {
		return nil, fmt.Errorf("cassettes: Redirect: from %q is not an absolute URL", from)
	}
	t, err := url.Parse(to)
	if err != nil || (t.Scheme != "http" && t.Scheme != "https") || t.Host == "" {
		return nil, fmt.Errorf("cassettes: Redirect: to %q is not an absolute http(s) URL", to)
	}
	if next == nil {
		next = http.DefaultTransport
	}
	refreshRun.noteRedirect(f)
	return redirect{from: f, to: t, next: next}, nil
}

type redirect struct {
	from, to *url.URL
	next     http.RoundTripper
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if !strings.EqualFold(u.Scheme, r.from.Scheme) || !strings.EqualFold(u.Host, r.from.Host) || !strings.HasPrefix(u.Path, r.from.Path) {
		return r.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = r.to.Scheme, r.to.Host
	out.URL.Path = strings.TrimSuffix(r.to.Path, "/") + "/" + strings.TrimPrefix(strings.TrimPrefix(u.Path, strings.TrimSuffix(r.from.Path, "/")), "/")
	out.URL.RawPath = ""
	out.Host = ""
	resp, err := r.next.RoundTrip(out)
	if err != nil {
		return nil, fmt.Errorf("cassettes: redirected %s %s to %s: %w", req.Method, redactURL(u.String()), redactURL(out.URL.String()), err)
	}
	return resp, nil
}
