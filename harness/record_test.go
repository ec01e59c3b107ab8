package harness

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
)

// TestRecordSwitch: with -cassettes.record selecting a cassette, the first
// run records it (through a real HTTP server here, inside its bubble, with
// no connection left behind) and is then made again replaying it, like
// every other run; the cassette's digest is pinned alike in every run.
func TestRecordSwitch(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"text":"hi"}`))
	}))
	defer srv.Close()
	redirect, err := cassettes.Redirect("https://api.example.com", srv.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "greet.yaml")
	if !inChild() {
		require.NoError(t, flag.Set(cassettes.RecordFlag, `greet\.yaml$`))
		defer func() { require.NoError(t, flag.Set(cassettes.RecordFlag, "")) }()
	}
	cfg := Config{Iterations: 20, Processes: -1, Cassette: cassettes.Options{RealTransport: redirect}}
	rep := cfg.check(t, "record", func(ctx context.Context, run *Run) ([]byte, error) {
		c, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		run.Pin("cassette_id", c.Transport.(interface{ CassetteID() string }).CassetteID())
		req, _ := http.NewRequestWithContext(ctx, "POST", "https://api.example.com/v1/greet", strings.NewReader(`{"who":"world"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}, false)
	require.Equal(t, Pass, rep.Verdict, "%s", rep)
	require.Equal(t, []string{path}, rep.Recorded)
	require.Equal(t, int64(1), calls.Load(), "only the first run reached the server")
	id, err := cassettes.Digest(path)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"cassette_id": id}, rep.Pin)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "https://api.example.com/v1/greet", "the cassette keeps the API's URL")
	require.Contains(t, rep.String(), "recorded "+path+" in run 0")
}
