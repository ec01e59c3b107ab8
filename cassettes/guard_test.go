package cassettes

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/guard"
)

// countingServer is an echo server that counts the requests it received,
// so a test can tell that nothing reached it.
func countingServer(t testing.TB) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"echo":`+string(b)+`}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// sendCtx is send with a request context.
func sendCtx(ctx context.Context, client *http.Client, base string, r plainReq) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	return resp, err
}

// TestReplayFallsBackToTheGuardTransport: go-vcr's real transport in
// Replay mode is the replay guard's, so even a request go-vcr is made to
// pass through (a passthrough hook, which this package never installs)
// cannot reach a live server: it fails with a *guard.ReplayModeError
// naming the host, and the dial is counted by the context's counter.
func TestReplayFallsBackToTheGuardTransport(t *testing.T) {
	srv, hits := countingServer(t)
	r := plainReq{method: "POST", path: "/v1/messages", body: `{"a":1}`}
	path := recordPlain(t, t.TempDir(), "g", srv, []plainReq{r})
	recorded := hits.Load()
	require.EqualValues(t, 1, recorded)

	c, err := Open(path, Options{AllowUnused: true})
	require.NoError(t, err)
	defer c.Close()
	require.IsType(t, &http.Transport{}, c.fallback)

	c.rec.AddPassthrough(func(*http.Request) bool { return true })
	dials := &guard.CountingDialer{}
	ctx := guard.WithDialCounter(context.Background(), dials)
	_, err = sendCtx(ctx, c.Client(), srv.URL, r)
	require.ErrorIs(t, err, guard.ErrReplayMode)
	var rme *guard.ReplayModeError
	require.ErrorAs(t, err, &rme)
	require.Equal(t, guard.OpDial, rme.Op)
	u, err2 := url.Parse(srv.URL)
	require.NoError(t, err2)
	require.Contains(t, rme.Detail, `"`+u.Hostname()+`"`, "the error names the host")
	var ce *CassetteError
	require.ErrorAs(t, err, &ce, "the refusal is located in the cassette")
	require.Equal(t, path, ce.Path)
	require.Equal(t, "replay", ce.Op)

	require.Equal(t, 1, dials.Dials(), "the refused dial is counted: %q", dials.Attempts())
	require.Zero(t, dials.Connections())
	require.Equal(t, recorded, hits.Load(), "the live server was reached")
}

// TestReplayMissKeepsItsMessage: a request the cassette did not record is a
// miss, reported with ErrInteractionNotFound and its diagnosis, in replay
// mode as outside it. It never gets as far as the guard transport, even
// when go-vcr would pass it through, so the ReplayModeError cannot replace
// the miss message, and nothing is dialled.
func TestReplayMissKeepsItsMessage(t *testing.T) {
	srv, hits := countingServer(t)
	r := plainReq{method: "POST", path: "/v1/messages", body: `{"a":1,"b":"x"}`}
	path := recordPlain(t, t.TempDir(), "m", srv, []plainReq{r})
	recorded := hits.Load()

	tests := []struct {
		name        string
		replay      bool
		passthrough bool
	}{
		{"outside replay mode", false, false},
		{"replay mode", true, false},
		{"replay mode, go-vcr passing everything through", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, Options{AllowUnused: true})
			require.NoError(t, err)
			defer c.Close()
			if tt.passthrough {
				c.rec.AddPassthrough(func(*http.Request) bool { return true })
			}
			dials := &guard.CountingDialer{}
			ctx := guard.WithDialCounter(context.Background(), dials)
			if tt.replay {
				ctx = guard.WithReplay(ctx)
			}
			miss := r
			miss.body = `{"a":2,"b":"x"}`
			_, err = sendCtx(ctx, c.Client(), srv.URL, miss)
			require.ErrorIs(t, err, ErrInteractionNotFound)
			require.False(t, errors.Is(err, guard.ErrReplayMode), "the miss became a replay-mode error: %v", err)
			msg := err.Error()
			for _, want := range []string{
				"POST " + srv.URL + "/v1/messages",
				"nearest recorded interaction: 0",
				"body (recorded vs requested)",
				"re-record with: go run ./cmd/refresh-cassettes",
			} {
				require.Contains(t, msg, want)
			}
			require.NotContains(t, msg, "forbidden in replay mode")
			require.NoError(t, dials.NoDials())
			require.Equal(t, recorded, hits.Load())
		})
	}
}
