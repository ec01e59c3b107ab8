package cassettes

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

func TestRedirect(t *testing.T) {
	tests := []struct {
		name, from, to, req, want string
	}{
		{"default root to loopback", "https://api.anthropic.com", "http://127.0.0.1:8080", "https://api.anthropic.com/v1/messages?beta=true", "http://127.0.0.1:8080/v1/messages?beta=true"},
		{"path prefix", "https://api.anthropic.com", "http://proxy.internal/anthropic/", "https://api.anthropic.com/v1/messages", "http://proxy.internal/anthropic/v1/messages"},
		{"from with a path", "https://api.openai.com/v1", "http://127.0.0.1:9/", "https://api.openai.com/v1/chat/completions", "http://127.0.0.1:9/chat/completions"},
		{"other host untouched", "https://api.anthropic.com", "http://127.0.0.1:8080", "https://example.com/v1/embeddings", "https://example.com/v1/embeddings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			rt, err := Redirect(tt.from, tt.to, roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r.URL.String()
				return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
			}))
			require.NoError(t, err)
			req, err := http.NewRequest("POST", tt.req, nil)
			require.NoError(t, err)
			_, err = rt.RoundTrip(req)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.req, req.URL.String(), "the recorded request keeps its URL")
		})
	}
	_, err := Redirect("https://api.anthropic.com", "ftp://x", nil)
	require.Error(t, err)
}

// TestRecordAgainstAFakeReplaysAtTheRealURL: recorded through Redirect,
// the cassette names the API's URL, so a client configured for the real
// API replays it, whatever port the fake had.
func TestRecordAgainstAFakeReplaysAtTheRealURL(t *testing.T) {
	srv := echoServer(t)
	path := filepath.Join(t.TempDir(), "r.yaml")
	rt, err := Redirect("https://api.example.com", srv.URL, srv.Client().Transport)
	require.NoError(t, err)
	c, err := Open(path, Config{Mode: Record, RealTransport: rt})
	require.NoError(t, err)
	r := plainReq{method: "POST", path: "/v1/messages", body: `{"a":1}`}
	live := readAll(t, do(t, c.Client(), "https://api.example.com", r))
	require.NoError(t, c.Close())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(raw), "url: https://api.example.com/v1/messages")
	require.NotContains(t, string(raw), strings.TrimPrefix(srv.URL, "http://"))

	c, err = Open(path, Config{})
	require.NoError(t, err)
	require.Equal(t, live, readAll(t, do(t, c.Client(), "https://api.example.com", r)))
	require.NoError(t, c.Close())
}

// withFlags sets the record flags for one test, which records as a fresh
// go test process would: no cassette recorded yet.
func withFlags(t *testing.T, record string, missing bool) {
	oldR, oldM := *recordFlag, *recordMissingFlag
	*recordFlag, *recordMissingFlag = record, missing
	resetRecordedOnce()
	t.Cleanup(func() {
		*recordFlag, *recordMissingFlag = oldR, oldM
		resetRecordedOnce()
	})
}

func resetRecordedOnce() {
	recordedOnce.Lock()
	recordedOnce.m = nil
	recordedOnce.Unlock()
}

func TestRecordFlags(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	r := plainReq{method: "POST", path: "/v1/messages", body: `{"a":1}`}
	openAndCall := func(t *testing.T, name string) (Mode, string) {
		c := OpenT(t, filepath.Join(dir, name), Config{RealTransport: srv.Client().Transport})
		return c.Mode(), readAll(t, do(t, c.Client(), srv.URL, r))
	}
	t.Run("plain go test replays and never dials", func(t *testing.T) {
		withFlags(t, "", false)
		_, err := Open(filepath.Join(dir, "a.yaml"), Config{RealTransport: srv.Client().Transport})
		require.ErrorIs(t, err, ErrCassetteNotFound)
		require.ErrorContains(t, err, "-cassettes.record=a\\.yaml$")
	})
	t.Run("record missing", func(t *testing.T) {
		withFlags(t, "", true)
		m, body := openAndCall(t, "a.yaml")
		require.Equal(t, Record, m)
		require.Contains(t, body, `"n":1`)
	})
	t.Run("record missing replays what exists", func(t *testing.T) {
		withFlags(t, "", true)
		m, body := openAndCall(t, "a.yaml")
		require.Equal(t, Replay, m)
		require.Contains(t, body, `"n":1`)
	})
	t.Run("record matching re-records", func(t *testing.T) {
		withFlags(t, `a\.yaml$`, false)
		m, body := openAndCall(t, "a.yaml")
		require.Equal(t, Record, m)
		require.Contains(t, body, `"n":2`)
	})
	t.Run("the re-recording replays", func(t *testing.T) {
		withFlags(t, `b\.yaml$`, false)
		m, body := openAndCall(t, "a.yaml")
		require.Equal(t, Replay, m)
		require.Contains(t, body, `"n":2`)
	})
	t.Run("invalid regexp", func(t *testing.T) {
		withFlags(t, `(`, false)
		_, err := Open(filepath.Join(dir, "a.yaml"), Config{})
		require.ErrorContains(t, err, "invalid -cassettes.record flag")
	})
}

// TestRecordFlagKeepsTheManifest: re-recording with the flag in a
// directory with a manifest records the new digest there, through Apply.
func TestRecordFlagKeepsTheManifest(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	err := Apply(dir, []Update{{File: "s.happy.yaml", Staged: stage(t, dir, "s.happy", []plainReq{reqA})}}, "")
	require.NoError(t, err)
	withFlags(t, `s\.happy`, false)
	c, err := Open(filepath.Join(dir, "s.happy.yaml"), Config{RealTransport: srv.Client().Transport})
	require.NoError(t, err)
	readAll(t, do(t, c.Client(), srv.URL, reqA))
	require.NoError(t, c.Close())
	require.NoError(t, Verify(dir, VerifyConfig{}))
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	require.Len(t, m.History, 2)
	require.Equal(t, c.ID(), m.Cassettes[0].Digest)
}

// TestOpenTHintNamesTheTest: a miss names the go test line that re-records
// the cassette from the test that opened it.
func TestOpenTHintNamesTheTest(t *testing.T) {
	srv := echoServer(t)
	path := recordPlain(t, t.TempDir(), "h", srv, []plainReq{reqA})
	c := OpenT(t, path, Config{AllowUnused: true})
	_, err := send(c.Client(), srv.URL, plainReq{method: "POST", path: "/other", body: `{}`})
	require.ErrorIs(t, err, ErrInteractionNotFound)
	require.ErrorContains(t, err, "go test ./cassettes -run '^TestOpenTHintNamesTheTest$' -count=1 '-cassettes.record=h\\.yaml$'", "the package before the flags")
	require.NotContains(t, err.Error(), "./cmd/")
}

// TestHeaderSemantics: a header the recording lacks does not make a miss;
// one on both sides with different values does, and the miss says which.
func TestHeaderSemantics(t *testing.T) {
	srv := echoServer(t)
	rec := plainReq{method: "POST", path: "/v1/messages", body: `{"a":1}`, header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}}
	path := recordPlain(t, t.TempDir(), "h", srv, []plainReq{rec})
	tests := []struct {
		name   string
		header http.Header
		miss   string
	}{
		{"charset dropped", http.Header{"Content-Type": {"application/json"}}, ""},
		{"header the recording lacks", http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}, ""},
		{"differing value", http.Header{"Content-Type": {"text/plain"}}, `the header Content-Type differs: recorded "application/json", requested "text/plain"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, Config{AllowUnused: true})
			require.NoError(t, err)
			req := rec
			req.header = tt.header
			resp, err := send(c.Client(), srv.URL, req)
			if tt.miss == "" {
				require.NoError(t, err)
				readAll(t, resp)
				return
			}
			require.ErrorIs(t, err, ErrInteractionNotFound)
			require.ErrorContains(t, err, tt.miss)
		})
	}
}

// TestCancelledStreamIsServedAgain: a replayed stream whose reader is
// cancelled before its end is served again to the retry, as the API would
// serve a retried request; one read to the end is not.
func TestCancelledStreamIsServedAgain(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/stream", body: `{"stream":true}`}
	path := recordPlain(t, t.TempDir(), "sse", srv, []plainReq{r})
	c, err := Open(path, Config{})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/stream", strings.NewReader(r.body))
	require.NoError(t, err)
	resp, err := c.Client().Do(req)
	require.NoError(t, err)
	_, err = resp.Body.Read(make([]byte, 4096))
	require.NoError(t, err)
	cancel()
	_, err = resp.Body.Read(make([]byte, 4096))
	require.ErrorIs(t, err, context.Canceled)
	resp.Body.Close()

	resp = do(t, c.Client(), srv.URL, r) // the retry
	require.Equal(t, sseBody, readAll(t, resp))
	_, err = send(c.Client(), srv.URL, r)
	var me *MissError
	require.ErrorAs(t, err, &me)
	require.True(t, me.Exhausted, "read to its end, it is not served a third time")
	require.ErrorIs(t, err, ErrInteractionNotFound)
	require.NoError(t, c.Close())
}
