package cassettes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// frameOffsetsHeader is the response header in which recording keeps when
// each frame of a stream arrived (server-sent events, NDJSON, a streamed
// JSON array or an AWS event stream): one offset per frame, in
// milliseconds since the request was sent, comma-separated, in order.
// It is an ordinary header, so the cassette stays a plain go-vcr cassette
// (go-vcr replays it as a header no client reads) and the cassette digest
// covers it; this package's replay removes it from the response and uses
// it to pace the frames (see Config.Timing).
const frameOffsetsHeader = "X-Codegenie-Frame-Offsets"

// Timing says when replay delivers the frames of a recorded stream.
type Timing int

const (
	// TimingAuto, the zero value, delivers each frame at its recorded
	// offset inside a testing/synctest bubble, on the bubble's fake clock
	// (a wait takes no wall time), and at once outside a bubble.
	TimingAuto Timing = iota
	// TimingOn delivers each frame at its recorded offset, outside a
	// bubble too (in wall time).
	TimingOn
	// TimingOff delivers every frame at once.
	TimingOff
)

// maxOffset bounds a recorded frame offset.
const maxOffset = 24 * time.Hour

// durationHeader carries the duration timedTransport measured to the
// recording's capture hook, which removes it and makes it the
// interaction's duration: it is never saved or seen by a client.
const durationHeader = "X-Codegenie-Measured-Duration"

// timedTransport is what recording sends requests through: it reads the
// whole body (go-vcr's recorder reads it whole anyway), noting when each
// read returned, and for a stream (see framingOf) adds frameOffsetsHeader;
// it measures the duration (until the headers, or until the end of a
// stream) into durationHeader. Both are measured on realNow,
// real time even inside a synctest bubble, where go-vcr's own measure
// (time.Now) reads the bubble's fake clock.
type timedTransport struct{ next http.RoundTripper }

// mark is how many bytes of a body had arrived at an offset.
type mark struct {
	n  int
	at time.Duration
}

func (t timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := realNow()
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	headers := realNow() - start
	defer resp.Body.Close()
	var body []byte
	var marks []mark
	chunk := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(chunk)
		if n > 0 {
			body = append(body, chunk[:n]...)
			marks = append(marks, mark{len(body), realNow() - start})
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(body) > maxCassetteBytes {
			return nil, fmt.Errorf("cassettes: the body of %s %s is larger than %d bytes, the most a cassette holds", req.Method, redactURL(req.URL.String()), maxCassetteBytes)
		}
	}
	out := *resp
	out.Header = resp.Header.Clone()
	out.Body = io.NopCloser(bytes.NewReader(body))
	text := string(body)
	f := framingOf(out.Header, text)
	if f == opaque || len(body) == 0 {
		out.Header.Set(durationHeader, strconv.FormatInt(int64(headers), 10))
		return &out, nil
	}
	offs, err := frameOffsets(f, text, marks)
	if err != nil {
		return nil, fmt.Errorf("cassettes: the response to %s %s cannot be recorded: %w", req.Method, redactURL(req.URL.String()), err)
	}
	out.Header.Set(frameOffsetsHeader, formatOffsets(offs))
	out.Header.Set(durationHeader, strconv.FormatInt(int64(realNow()-start), 10))
	return &out, nil
}

// frameOffsets is the arrival offset of each frame of body, split by f:
// when the read that completed it returned.
func frameOffsets(f framing, body string, marks []mark) ([]time.Duration, error) {
	var out []time.Duration
	m := 0
	for end, err := range f.ends(body) {
		if err != nil {
			return nil, err
		}
		for m < len(marks)-1 && marks[m].n < end {
			m++
		}
		out = append(out, marks[m].at)
	}
	return out, nil
}

func formatOffsets(offs []time.Duration) string {
	parts := make([]string, len(offs))
	for i, d := range offs {
		parts[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return strings.Join(parts, ",")
}

// parseOffsets reads a frameOffsetsHeader value for body, split by f: one
// offset per frame, non-decreasing, each at most maxOffset.
func parseOffsets(v, body string, f framing) ([]time.Duration, error) {
	frames, err := f.count(body)
	if err != nil {
		return nil, err
	}
	if frames == 0 && strings.TrimSpace(v) == "" {
		return nil, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) != frames {
		return nil, fmt.Errorf("%s has %d offsets for %d frames", frameOffsetsHeader, len(parts), frames)
	}
	out := make([]time.Duration, len(parts))
	for i, p := range parts {
		ms, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > maxOffset {
			return nil, fmt.Errorf("%s: offset %d (%q) is not a number of milliseconds between 0 and %d", frameOffsetsHeader, i, p, maxOffset.Milliseconds())
		}
		out[i] = time.Duration(ms) * time.Millisecond
		if i > 0 && out[i] < out[i-1] {
			return nil, fmt.Errorf("%s: offset %d (%d ms) is before the one before it", frameOffsetsHeader, i, ms)
		}
	}
	return out, nil
}

// takeOffsets removes frameOffsetsHeader from h (a template's own copy)
// and parses it for body, which must be a stream (f not opaque).
func takeOffsets(h http.Header, body string, f framing) ([]time.Duration, error) {
	v, ok := h[frameOffsetsHeader]
	if !ok {
		return nil, nil
	}
	delete(h, frameOffsetsHeader)
	if f == opaque {
		return nil, fmt.Errorf("%s on a response that is not a stream", frameOffsetsHeader)
	}
	if len(v) != 1 {
		return nil, fmt.Errorf("%s appears %d times", frameOffsetsHeader, len(v))
	}
	return parseOffsets(v[0], body, f)
}

// FrameOffsets returns when each frame of a recorded stream arrived, since
// the request was sent (see frameOffsetsHeader), or nil when the response
// is no stream or was recorded without them.
func (r Recorded) FrameOffsets() []time.Duration {
	v := r.ResponseHeaders.Get(frameOffsetsHeader)
	if v == "" {
		return nil
	}
	f := framingOf(r.ResponseHeaders, r.ResponseBody)
	if f == opaque {
		return nil
	}
	offs, err := parseOffsets(v, r.ResponseBody, f)
	if err != nil {
		return nil
	}
	return offs
}

// inBubble reports whether the calling goroutine is in a testing/synctest
// bubble: the runtime gives time.Now no monotonic clock reading there, and
// always does outside one.
func inBubble() bool {
	t := time.Now()
	return t == t.Round(0)
}

// pacer delivers a replayed stream's frames at their recorded offsets.
type pacer struct {
	start   time.Time
	offsets []time.Duration
	frame   int  // the next frame to deliver
	atStart bool // the next Read begins that frame
	done    chan struct{}
}

// pacerFor returns the pacer of a response with offsets, or nil when its
// frames are delivered at once.
func pacerFor(offsets []time.Duration, timing Timing, scale float64) *pacer {
	if len(offsets) == 0 || !paces(timing) {
		return nil
	}
	if scale != 1 {
		scaled := make([]time.Duration, len(offsets))
		for i, d := range offsets {
			scaled[i] = time.Duration(float64(d) * scale)
		}
		offsets = scaled
	}
	//detvet:ignore the pacer starts on the clock replay paces by (a synctest bubble's fake clock under TimingAuto)
	return &pacer{start: time.Now(), offsets: offsets, atStart: true, done: make(chan struct{})}
}

// paces reports whether replay waits under timing here: TimingOn always,
// TimingAuto inside a synctest bubble (on its fake clock).
func paces(timing Timing) bool {
	return timing == TimingOn || timing == TimingAuto && inBubble()
}

// latencyOf is how Config.Latency times interaction i's response, where
// replay paces: the wait before the response is returned, and the factor
// its frame offsets are scaled by. A stream whose recording measured its
// duration waits for nothing and has its frames scaled (Latency(d)/d);
// any other response waits Latency(d). Without Latency: no wait, the
// offsets as recorded.
func (c *Cassette) latencyOf(i int) (wait time.Duration, scale float64) {
	if c.cfg.Latency == nil || !paces(c.cfg.Timing) {
		return 0, 1
	}
	d := min(max(c.interaction(i).Response.Duration, 0), maxOffset)
	l := min(max(c.cfg.Latency(d), 0), maxOffset)
	if t := &c.p.resps[i]; len(t.offsets) > 0 && d > 0 {
		return 0, float64(l) / float64(d)
	}
	return l, 1
}

// sleepContext waits d, or until ctx is done (its error). A deadline of
// ctx at or before the instant the wait ends wins (see endsFirst), and
// when ctx is done by the time the wait ends, its error is returned.
func sleepContext(ctx context.Context, d time.Duration) error {
	if endsFirst(ctx, time.Now().Add(d)) {
		<-ctx.Done()
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return ctx.Err()
}

// endsFirst reports whether ctx's deadline comes no later than due, the
// instant a replayed response or frame arrives: then the request ends
// first and nothing due at or after its deadline is delivered. So it
// goes over a network: an answer that lands at the deadline still has to
// be read and handed up, and by then the deadline's timer has fired;
// context.WithDeadline, too, counts a deadline that has come as passed.
// Deciding by the two instants before waiting gives one answer every
// time in a synctest bubble, where both fall at the same fake instant and
// which of two timers wakes its goroutine first is up to the scheduler.
func endsFirst(ctx context.Context, due time.Time) bool {
	dl, ok := ctx.Deadline()
	return ok && !dl.After(due)
}

// waitFrame waits, with b.mu released, until the frame the next Read
// begins is due, the request's context is done or the body is closed; a
// frame due at or after the request's deadline waits for the deadline
// (see endsFirst). b.mu is held on entry and on return.
func (b *replayBody) waitFrame() error {
	p := b.pace
	for p != nil && p.atStart && p.frame < len(p.offsets) {
		due := p.start.Add(p.offsets[p.frame])
		first := endsFirst(b.ctx, due)
		d := time.Until(due)
		if d <= 0 && !first {
			return nil
		}
		b.mu.Unlock()
		var timer *time.Timer
		var dueC <-chan time.Time // nil, never ready, when the deadline is first
		if !first {
			timer = time.NewTimer(d)
			dueC = timer.C
		}
		select {
		case <-dueC:
		case <-b.ctx.Done():
		case <-p.done:
		}
		if timer != nil {
			timer.Stop()
		}
		b.mu.Lock()
		if b.closed {
			return http.ErrBodyReadAfterClose
		}
		if err := b.ctx.Err(); err != nil {
			b.cancel()
			return err
		}
	}
	return nil
}

// delivered notes that a Read returned bytes up to off, the end of the
// current frame being end.
func (p *pacer) delivered(off, end int) {
	if p == nil {
		return
	}
	p.atStart = off == end
	if p.atStart {
		p.frame++
	}
}

// stop wakes a waiting Read when the body is closed.
func (p *pacer) stop() {
	if p != nil {
		close(p.done)
	}
}

// takeDuration removes durationHeader from h and returns the duration it
// holds (0 when absent or malformed).
func takeDuration(h http.Header) time.Duration {
	v := h.Get(durationHeader)
	h.Del(durationHeader)
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ns < 0 || time.Duration(ns) > maxOffset {
		return 0
	}
	return time.Duration(ns)
}

// timingSlack is the absolute part of the tolerance within which a
// re-recorded timing is noise (see keepsTiming).
const timingSlack = time.Second

// keepsTiming reports whether a timing measured again, now, is noise
// around the one recorded before, old, so that the recorded one is kept
// (see Re-recording and timing in the package documentation): now is
// within timingSlack of old, or between half and twice old, the band in
// which a determinism gate already replays old (harness.Config.Latency's
// default scales a recorded duration by 0.5 to 2, and serves a recording
// without one between 1 ms and about 1 s).
func keepsTiming(old, now time.Duration) bool {
	d := now - old
	if d < 0 {
		d = -d
	}
	return d <= timingSlack || (2*now >= old && now <= 2*old)
}

// keepTiming gives each interaction of the new recording cs, parsed as
// p, the timing (duration and frame offsets) of the interaction of the
// earlier recording ref it repeats, when every new measurement is noise
// around the old one (keepsTiming). An interaction repeats one of ref
// when it has the same request key, status and response body; identical
// ones are paired in file order. It reports whether it changed any.
func keepTiming(ref, p *parsed, cs *cassette.Cassette) bool {
	used := make([]bool, len(ref.c.Interactions))
	changed := false
	for i, in := range cs.Interactions {
		for _, j := range ref.index[p.keys[i]] {
			old := ref.c.Interactions[j]
			if used[j] || old.Response.Code != in.Response.Code || old.Response.Body != in.Response.Body {
				continue
			}
			used[j] = true
			if sameTimingWithin(&old.Response, &in.Response) {
				changed = setTiming(&in.Response, &old.Response) || changed
			}
			break
		}
	}
	return changed
}

// sameTimingWithin reports whether every timing of now is noise around
// old's: the duration and each frame offset.
func sameTimingWithin(old, now *cassette.Response) bool {
	if !keepsTiming(old.Duration, now.Duration) {
		return false
	}
	ov, nv := old.Headers.Values(frameOffsetsHeader), now.Headers.Values(frameOffsetsHeader)
	if len(ov) != len(nv) {
		return false
	}
	if len(ov) == 0 {
		return true
	}
	f := framingOf(http.Header(now.Headers), now.Body)
	oo, err1 := parseOffsets(ov[0], old.Body, f)
	no, err2 := parseOffsets(nv[0], now.Body, f)
	if err1 != nil || err2 != nil || len(oo) != len(no) {
		return false
	}
	for k := range oo {
		if !keepsTiming(oo[k], no[k]) {
			return false
		}
	}
	return true
}

// setTiming gives now old's duration and frame offsets, and reports
// whether that changed now.
func setTiming(now, old *cassette.Response) bool {
	changed := now.Duration != old.Duration
	now.Duration = old.Duration
	if ov := old.Headers.Values(frameOffsetsHeader); len(ov) == 1 {
		h := now.Headers
		if nv := h.Values(frameOffsetsHeader); len(nv) != 1 || nv[0] != ov[0] {
			changed = true
			h.Set(frameOffsetsHeader, ov[0])
		}
	}
	return changed
}
