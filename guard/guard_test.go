package guard_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"
	"lukechampine.com/blake3"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/guard"
	"github.com/codegenie/codegenie/guard/guardtest"
)

// server starts a plain-HTTP test server answering "ok" and returns it.
func server(t testing.TB) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	return s
}

// get fetches u with c under ctx and returns the body.
func get(ctx context.Context, c *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// requireReplayError asserts that err is a *ReplayModeError for op whose
// message names op and, if non-empty, mentions detail.
func requireReplayError(t testing.TB, err error, op, detail string) {
	t.Helper()
	require.Error(t, err)
	rme, ok := errors.AsType[*guard.ReplayModeError](err)
	require.True(t, ok, "not a *guard.ReplayModeError: %v", err)
	require.Equal(t, op, rme.Op)
	require.Contains(t, err.Error(), op)
	if detail != "" {
		require.Contains(t, rme.Detail, detail)
	}
}

// TestForbiddenOperations makes every guarded operation once in replay mode,
// where it must fail with a ReplayModeError naming it, and once outside,
// where it must work.
func TestForbiddenOperations(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		detail string
		do     func(ctx context.Context) error
	}{
		{
			name: "assert", op: "vector search",
			do: func(ctx context.Context) error { return guard.AssertReplaySafe(ctx, "vector search") },
		},

		{
			name: "wall clock", op: guard.OpWallClock,
			do: func(ctx context.Context) error {
				c, err := guard.WallClock(ctx)
				if err == nil && c().IsZero() {
					return errors.New("zero wall clock")
				}
				return err
			},
		},
		{
			name: "random ID", op: guard.OpRandomID,
			do: func(ctx context.Context) error {
				ids, err := guard.RandomIDSource(ctx)
				if err != nil {
					return err
				}
				if a, b := ids(), ids(); a == b {
					return errors.New("random IDs repeat")
				}
				return err
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			require.NoError(t, tt.do(ctx), "outside replay mode")
			require.False(t, guard.IsReplay(ctx))
			rctx := guard.WithReplay(ctx)
			require.True(t, guard.IsReplay(rctx))
			requireReplayError(t, tt.do(rctx), tt.op, tt.detail)
		})
	}
}

// cassette is a stand-in for a replaying cassette: it serves recorded
// bodies by URL path and hands every miss to Fallback, as a recorder in a
// passthrough mode would.
type cassette struct {
	Recorded map[string]string
	Fallback http.RoundTripper
}

func (c cassette) RoundTrip(req *http.Request) (*http.Response, error) {
	if body, ok := c.Recorded[req.URL.Path]; ok {
		return &http.Response{
			StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(body)),
			Header: http.Header{}, Request: req, ProtoMajor: 1, ProtoMinor: 1,
		}, nil
	}
	return c.Fallback.RoundTrip(req)
}

func TestReplayClient(t *testing.T) {
	srv := server(t)
	counter := guardtest.CountDials(t)
	ctx := guard.WithDialCounter(guard.WithReplay(context.Background()), counter)

	c := &http.Client{Transport: cassette{
		Recorded: map[string]string{"/v1/messages": "recorded"},
		Fallback: guard.Transport(),
	}}
	body, err := get(ctx, c, srv.URL+"/v1/messages")
	require.NoError(t, err)
	require.Equal(t, "recorded", body)
	require.Zero(t, counter.Dials())

	// A miss falls back to the real transport, which refuses.
	_, err = get(ctx, c, srv.URL+"/v1/other")
	requireReplayError(t, err, guard.OpDial, "127.0.0.1")
	var uerr *url.Error
	require.ErrorAs(t, err, &uerr, "the client reports the refusal as a *url.Error")
	require.Equal(t, 1, counter.Dials())
	require.Zero(t, counter.Connections())

	// The refusing transport refuses even outside replay mode, and the
	// refusal is counted through the context.
	_, err = get(guard.WithDialCounter(context.Background(), counter), &http.Client{Transport: guard.Transport()}, srv.URL)
	requireReplayError(t, err, guard.OpDial, "127.0.0.1")
	require.Equal(t, 2, counter.Dials())

	// http.DefaultClient is covered by CountDials.
	_, err = get(context.Background(), http.DefaultClient, srv.URL)
	requireReplayError(t, err, guard.OpDial, "")
	require.Equal(t, 3, counter.Dials())
	require.Zero(t, counter.Connections())
	require.Error(t, counter.NoDials())
}

// TestCountingDialer counts real connections to a local server, and
// refusals when it has no dialer.
func TestCountingDialer(t *testing.T) {
	srv := server(t)
	c := &guard.CountingDialer{Next: (&net.Dialer{}).DialContext}
	tr := c.Transport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	body, err := get(context.Background(), client, srv.URL)
	require.NoError(t, err)
	require.Equal(t, "ok", body)
	require.Equal(t, 1, c.Dials())
	require.Equal(t, 1, c.Connections())
	require.Equal(t, []string{"tcp " + strings.TrimPrefix(srv.URL, "http://")}, c.Attempts())

	var zero guard.CountingDialer
	_, err = zero.DialContext(context.Background(), "tcp", "example.com:443")
	requireReplayError(t, err, guard.OpDial, `"example.com"`)
	require.NoError(t, (&guard.CountingDialer{}).NoDials())
	require.ErrorContains(t, zero.NoDials(), "example.com:443")
}

func TestRecordedClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name  string
		times []time.Time
		reads int
		want  []time.Time
		err   bool
	}{
		{name: "exact", times: []time.Time{t0, t0.Add(time.Second)}, reads: 2, want: []time.Time{t0, t0.Add(time.Second)}},
		{name: "fewer reads", times: []time.Time{t0, t0.Add(time.Second)}, reads: 1, want: []time.Time{t0}},
		{name: "overrun repeats the last", times: []time.Time{t0}, reads: 3, want: []time.Time{t0, t0, t0}, err: true},
		{name: "empty", times: nil, reads: 1, want: []time.Time{{}}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tape := make([]events.Event, len(tt.times))
			for i, at := range tt.times {
				tape[i].EmittedAt = at
			}
			c := guard.ClockFromTape(tape)
			clock := c.Now
			var got []time.Time
			for range tt.reads {
				got = append(got, clock())
			}
			require.Equal(t, tt.want, got, pretty.Diff(tt.want, got))
			require.Equal(t, tt.reads, c.Reads())
			if tt.err {
				requireReplayError(t, c.Err(), guard.OpWallClock, fmt.Sprintf("read %d times", tt.reads))
			} else {
				require.NoError(t, c.Err())
			}
		})
	}
}

// TestClockFromTape records a run with a fake clock and replays its
// timestamps into a second recorder: the tapes are identical, stamps
// included.
func TestClockFromTape(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	n := 0
	fake := func() time.Time { n++; return t0.Add(time.Duration(n) * time.Millisecond) }
	run := func(opts events.Config) []events.Event {
		r := events.NewRecorder(opts)
		seq, err := r.EmitAfter(0, kindStarted, map[string]string{"a": "b"})
		require.NoError(t, err)
		_, err = r.EmitAfter(seq, kindBuilt, "p")
		require.NoError(t, err)
		return r.Events()
	}
	recorded := run(events.Config{Clock: fake, NewID: guard.IDSource("key")})
	c := guard.ClockFromTape(recorded)
	replayed := run(events.Config{Clock: c.Now, NewID: guard.IDSource("key")})
	require.Equal(t, recorded, replayed, pretty.Diff(recorded, replayed))
	require.Equal(t, events.Chain(recorded, 0), events.Chain(replayed, 0))
	require.NoError(t, c.Err())
}

var uuidV8 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// referenceID computes DeterministicID from the specification in doc.go
// with independent code.
func referenceID(runKey string, seq uint64) string {
	h := blake3.New(32, nil)
	_, _ = io.WriteString(h, "codegenie/guard/id/v1\x00"+runKey+"\x00")
	_ = binary.Write(h, binary.BigEndian, seq)
	u := h.Sum(nil)[:16]
	u[6] = 0x80 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func TestDeterministicID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := rapid.Custom(func(t *rapid.T) struct {
			key string
			seq uint64
		} {
			return struct {
				key string
				seq uint64
			}{rapid.String().Draw(t, "runKey"), rapid.Uint64().Draw(t, "seq")}
		}).Draw(t, "input")
		id := guard.DeterministicID(in.key, in.seq)
		require.Regexp(t, uuidV8, id)
		require.Equal(t, referenceID(in.key, in.seq), id)
		require.NotEqual(t, id, guard.DeterministicID(in.key, in.seq+1))
		require.NotEqual(t, id, guard.DeterministicID(in.key+"x", in.seq))
	})
}

func TestIDSourceConcurrent(t *testing.T) {
	const n = 200
	next := guard.IDSource("run")
	got := make(map[string]bool, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range n / 4 {
				id := next()
				mu.Lock()
				got[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	want := make(map[string]bool, n)
	for i := range uint64(n) {
		want[guard.DeterministicID("run", i+1)] = true
	}
	require.Equal(t, want, got)
}

func TestReplayModeErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *guard.ReplayModeError
		want string
	}{
		{name: "custom op", err: &guard.ReplayModeError{Op: "vector search"}, want: "guard: vector search is forbidden in replay mode"},
		{name: "dial", err: &guard.ReplayModeError{Op: guard.OpDial, Detail: "tcp"}, want: "guard: network dial is forbidden in replay mode: tcp; a replayed run may only be served by its cassette: the request is not in it, so re-record the cassette (or find why the request differs from the recorded one)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.err.Error())
			_, ok := errors.AsType[*guard.ReplayModeError](fmt.Errorf("wrapped: %w", tt.err))
			require.True(t, ok)
		})
	}
}
