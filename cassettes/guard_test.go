package cassettes

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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

// TestReplayMissKeepsItsMessage: a request the cassette did not record is a
// miss, reported with ErrInteractionNotFound and its diagnosis, in the
// replay guard's replay mode as outside it; replay has no transport to
// fall back to, so nothing is dialled and the live server is not reached.
func TestReplayMissKeepsItsMessage(t *testing.T) {
	srv, hits := countingServer(t)
	r := plainReq{method: "POST", path: "/v1/messages", body: `{"a":1,"b":"x"}`}
	path := recordPlain(t, t.TempDir(), "m", srv, []plainReq{r})
	recorded := hits.Load()

	for _, replayMode := range []bool{false, true} {
		t.Run(map[bool]string{false: "outside replay mode", true: "replay mode"}[replayMode], func(t *testing.T) {
			c, err := Open(path, Config{AllowUnused: true})
			require.NoError(t, err)
			defer c.Close()
			dials := &guard.CountingDialer{}
			ctx := guard.WithDialCounter(context.Background(), dials)
			if replayMode {
				ctx = guard.WithReplay(ctx)
			}
			miss := r
			miss.body = `{"a":2,"b":"x"}`
			_, err = sendCtx(ctx, c.Client(), srv.URL, miss)
			require.ErrorIs(t, err, ErrInteractionNotFound)
			var rme *guard.ReplayModeError
			require.False(t, errors.As(err, &rme), "the miss became a replay-mode error: %v", err)
			msg := err.Error()
			for _, want := range []string{
				"POST " + srv.URL + "/v1/messages",
				"nearest recorded interaction: 0",
				"body (recorded vs requested)",
			} {
				require.Contains(t, msg, want)
			}
			require.NotContains(t, msg, "re-record", "opened without OpenT or a Hint, no command is known")
			require.NoError(t, dials.NoDials())
			require.Equal(t, recorded, hits.Load())
		})
	}
}
