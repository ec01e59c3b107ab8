package cassettes

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/stretchr/testify/require"
)

// digestServer answers each request with the digest of its body, so the
// same requests always get the same responses, after the delay *delay
// holds (nil: none): a machine under load.
func digestServer(t testing.TB, delay *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if delay != nil {
			time.Sleep(time.Duration(delay.Load()))
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo":%q}`, events.Sum(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func orderReqs(word string) []plainReq {
	var out []plainReq
	for i, f := range []string{"main.go", "util.go", "api.go", "db.go", "main.go"} {
		w := "style"
		if i == 1 {
			w = word
		}
		out = append(out, plainReq{method: "POST", path: "/v1/messages", body: fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"review %s for %s"}]}`, f, w)})
	}
	return out
}

// recordConcurrently records reqs through a Cassette, sending them in the
// order given by perm, each from its own goroutine once the previous one
// was sent, or all at once when perm is nil.
func recordConcurrently(t *testing.T, path string, srv *httptest.Server, reqs []plainReq, perm []int) {
	t.Helper()
	c, err := Open(path, Config{Mode: Record, RealTransport: srv.Client().Transport})
	require.NoError(t, err)
	var wg sync.WaitGroup
	if perm == nil {
		for _, r := range reqs {
			wg.Go(func() { readAll(t, do(t, c.Client(), srv.URL, r)) })
		}
	} else {
		for _, i := range perm {
			wg.Go(func() { readAll(t, do(t, c.Client(), srv.URL, reqs[i])) })
			wg.Wait()
		}
	}
	wg.Wait()
	require.NoError(t, c.Close())
}

// TestConcurrentRecordingIsStable: the same requests arriving in any order,
// re-recorded over the cassette they were first recorded into, are saved
// in one order, byte for byte, whatever the machine's load does to the
// measured timing; a one-word change in one request changes only that
// interaction's lines; and concurrent replay of the sorted cassette serves
// each request its own response.
func TestConcurrentRecordingIsStable(t *testing.T) {
	var delay atomic.Int64
	srv := digestServer(t, &delay)
	dir := t.TempDir()
	reqs := orderReqs("style")
	p := filepath.Join(dir, "r0.yaml")
	var first []byte
	// Each re-recording answers as slowly as a loaded machine might: the
	// measured durations differ (0s, 100ms, 200ms at the saved grain).
	slow := []time.Duration{0, 60 * time.Millisecond, 0, 160 * time.Millisecond, 0}
	for n, perm := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}, nil, nil} {
		delay.Store(int64(slow[n]))
		recordConcurrently(t, p, srv, reqs, perm)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if n == 0 {
			first = b
			continue
		}
		require.Equal(t, string(first), string(b), "re-recording %d differs from the first recording", n)
	}

	delay.Store(0)
	changed := filepath.Join(dir, "changed.yaml")
	require.NoError(t, os.WriteFile(changed, first, 0o644))
	recordConcurrently(t, changed, srv, orderReqs("security"), []int{3, 1, 4, 0, 2})
	b, err := os.ReadFile(changed)
	require.NoError(t, err)
	before, after := strings.Split(string(first), "\n"), strings.Split(string(b), "\n")
	require.Equal(t, len(before), len(after))
	differ := map[string][]int{}
	id := ""
	for i := range before {
		if v, ok := strings.CutPrefix(strings.TrimSpace(after[i]), "- id: "); ok {
			id = v
		}
		if before[i] != after[i] {
			differ[id] = append(differ[id], i)
		}
	}
	// The request body, its content length, and the response that echoes
	// its digest (and, measured anew, perhaps its duration): all lines of
	// the one interaction whose request changed.
	require.Len(t, differ, 1, "lines of several interactions differ: %v", differ)
	for _, lines := range differ {
		require.GreaterOrEqual(t, len(lines), 3, "lines %v differ", lines)
		require.LessOrEqual(t, len(lines), 4, "lines %v differ", lines)
	}

	c, err := Open(filepath.Join(dir, "r0.yaml"), Config{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Go(func() {
			got := readAll(t, do(t, c.Client(), srv.URL, r))
			require.Equal(t, fmt.Sprintf(`{"echo":%q}`, events.Sum([]byte(r.body))), got)
		})
	}
	wg.Wait()
	require.NoError(t, c.Close())
}
