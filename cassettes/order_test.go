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
	"testing"

	"github.com/codegenie/codegenie/events"
	"github.com/stretchr/testify/require"
)

// digestServer answers each request with the digest of its body, so the
// same requests always get the same responses.
func digestServer(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	c, err := Open(path, Options{Mode: Record, RealTransport: srv.Client().Transport})
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

// TestConcurrentRecordingIsStable: the same requests arriving in any order
// are saved in one order, byte for byte; a one-word change in one request
// changes only that interaction's lines; and concurrent replay of the
// sorted cassette serves each request its own response.
func TestConcurrentRecordingIsStable(t *testing.T) {
	srv := digestServer(t)
	dir := t.TempDir()
	reqs := orderReqs("style")
	var files []string
	for n, perm := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 0, 4, 1, 3}, nil, nil} {
		p := filepath.Join(dir, fmt.Sprintf("r%d.yaml", n))
		recordConcurrently(t, p, srv, reqs, perm)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		files = append(files, strings.ReplaceAll(string(b), filepath.Base(p), "X"))
	}
	for n := 1; n < len(files); n++ {
		require.Equal(t, files[0], files[n], "recording %d differs from recording 0", n)
	}

	changed := filepath.Join(dir, "changed.yaml")
	recordConcurrently(t, changed, srv, orderReqs("security"), []int{3, 1, 4, 0, 2})
	b, err := os.ReadFile(changed)
	require.NoError(t, err)
	before, after := strings.Split(files[0], "\n"), strings.Split(string(b), "\n")
	require.Equal(t, len(before), len(after))
	var differ []int
	for i := range before {
		if before[i] != after[i] {
			differ = append(differ, i)
		}
	}
	// The request body, its content length, and the response that
	// echoes its digest.
	require.Len(t, differ, 3, "lines %v differ", differ)

	c, err := Open(filepath.Join(dir, "r0.yaml"), Options{})
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
