package cassettes

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/recorder"
)

// echoServer answers every request with a JSON document that echoes the
// method, path and body, plus volatile headers a real API sends. SSE is
// served on /stream.
func echoServer(t testing.TB) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c := n.Add(1)
		w.Header().Set("Date", "Sun, 22 Nov 2026 01:02:03 GMT")
		w.Header().Set("Request-Id", fmt.Sprintf("req_%d", c))
		w.Header().Set("Anthropic-Ratelimit-Requests-Remaining", "49")
		w.Header().Set("Anthropic-Ratelimit-Requests-Reset", "2026-11-22T01:03:00Z")
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sseBody)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n":%d,"method":%q,"path":%q,"body":%q}`, c, r.Method, r.URL.Path, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const sseBody = "event: a\ndata: {\"i\":1}\n\nevent: b\ndata: {\"i\":2}\n\n: comment\n\nevent: c\ndata: {\"i\":3}\n\n"

type plainReq struct {
	method, path, body string
	header             http.Header
}

// recordPlain records reqs against srv with an unmodified go-vcr recorder
// and returns the cassette path.
func recordPlain(t testing.TB, dir, name string, srv *httptest.Server, reqs []plainReq) string {
	t.Helper()
	rec, err := recorder.NewWithOptions(&recorder.Options{
		CassetteName:  filepath.Join(dir, name),
		Mode:          recorder.ModeRecordOnly,
		RealTransport: srv.Client().Transport,
	})
	require.NoError(t, err)
	client := rec.GetDefaultClient()
	for _, r := range reqs {
		resp := do(t, client, srv.URL, r)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	require.NoError(t, rec.Stop())
	return filepath.Join(dir, name+".yaml")
}

func do(t testing.TB, client *http.Client, base string, r plainReq) *http.Response {
	t.Helper()
	resp, err := send(client, base, r)
	require.NoError(t, err)
	return resp
}

func send(client *http.Client, base string, r plainReq) (*http.Response, error) {
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, base+r.path, body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	return client.Do(req)
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// failingTemp writes half of what it is given, then fails: a refresh
// killed in the middle of a write.
type failingTemp struct {
	f *os.File
}

func (f *failingTemp) Write(b []byte) (int, error) {
	n, _ := f.f.Write(b[:len(b)/2])
	return n, errors.New("disk full (simulated)")
}
func (f *failingTemp) Sync() error  { return f.f.Sync() }
func (f *failingTemp) Close() error { return f.f.Close() }
func (f *failingTemp) Name() string { return f.f.Name() }

func failingCreate(dir, pattern string) (tempFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &failingTemp{f: f}, nil
}

// dirSnapshot maps every file name in dir to its bytes.
func dirSnapshot(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}
