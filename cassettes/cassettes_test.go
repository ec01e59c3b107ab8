package cassettes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlainGoVCRCassetteReplays(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	reqs := []plainReq{
		{method: "POST", path: "/v1/messages", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, header: http.Header{"Content-Type": {"application/json"}}},
		{method: "GET", path: "/v1/models?limit=2&after=x"},
		{method: "POST", path: "/plain", body: "not json", header: http.Header{"Content-Type": {"text/plain"}}},
	}
	path := recordPlain(t, dir, "plain", srv, reqs)
	// What the live server said, in order, to compare with the replay.
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(raw), "version: 2")

	c, err := Open(path, Config{})
	require.NoError(t, err)
	require.Len(t, c.ID(), 64)
	// Replayed in a different order: matching is by key, not position.
	for _, i := range []int{2, 0, 1} {
		resp := do(t, c.Client(), "http://"+strings.TrimPrefix(srv.URL, "http://"), reqs[i])
		body := readAll(t, resp)
		require.Equal(t, 200, resp.StatusCode)
		require.Contains(t, body, fmt.Sprintf(`"n":%d`, i+1), "request %d got another interaction's response", i)
	}
	require.NoError(t, c.Close())
}

func TestReplayNeverDials(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	r := plainReq{method: "POST", path: "/x", body: `{"a":1}`}
	path := recordPlain(t, dir, "c", srv, []plainReq{r})
	srv.Close() // anything that dialled would now fail
	c, err := Open(path, Config{})
	require.NoError(t, err)
	require.Contains(t, readAll(t, do(t, c.Client(), srv.URL, r)), `"n":1`)
	require.NoError(t, c.Close())
}

func TestMatching(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	sdkHeaders := http.Header{
		"Content-Type":                {"application/json"},
		"Anthropic-Version":           {"2023-06-01"},
		"Anthropic-Beta":              {"b1,b2"},
		"User-Agent":                  {"Anthropic/Go 1.84.0"},
		"X-Stainless-Os":              {"Linux"},
		"X-Stainless-Arch":            {"x64"},
		"X-Stainless-Runtime-Version": {"go1.26.8"},
		"X-Stainless-Package-Version": {"1.84.0"},
		"X-Stainless-Timeout":         {"600"},
		"X-Stainless-Retry-Count":     {"0"},
		"Idempotency-Key":             {"stainless-go-retry-aaaa"},
		"X-Api-Key":                   {"[REDACTED]"}, // as another recorder leaves it
	}
	base := plainReq{method: "POST", path: "/v1/messages?beta=true", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, header: sdkHeaders}
	path := recordPlain(t, dir, "m", srv, []plainReq{base})

	with := func(f func(r *plainReq)) plainReq {
		r := base
		r.header = base.header.Clone()
		f(&r)
		return r
	}
	tests := []struct {
		name  string
		req   plainReq
		match bool
	}{
		{"identical", base, true},
		{"other OS, arch, Go, SDK version, retry count, timeout, key", with(func(r *plainReq) {
			r.header.Set("User-Agent", "Anthropic/Go 9.9.9")
			r.header.Set("X-Stainless-Os", "Windows")
			r.header.Set("X-Stainless-Arch", "arm64")
			r.header.Set("X-Stainless-Runtime-Version", "go1.30")
			r.header.Set("X-Stainless-Package-Version", "9.9.9")
			r.header.Set("X-Stainless-Timeout", "30")
			r.header.Set("X-Stainless-Retry-Count", "2")
			r.header.Set("Idempotency-Key", "other")
			r.header.Set("X-Api-Key", "another-key")
			r.header.Set("X-Stainless-Helper-Method", "stream")
		}), true},
		{"JSON keys reordered and reformatted", with(func(r *plainReq) {
			r.body = "{ \"messages\": [ {\"content\":\"hi\", \"role\":\"user\"} ],\n \"max_tokens\": 5.0, \"model\": \"m\" }"
		}), true},
		{"beta list reordered, content type case", with(func(r *plainReq) {
			r.header.Set("Anthropic-Beta", "b2, b1")
			r.header.Set("Content-Type", "Application/JSON")
		}), true},
		{"URL default port", with(func(r *plainReq) {}), true},
		{"body field changed", with(func(r *plainReq) { r.body = strings.Replace(r.body, `"hi"`, `"ho"`, 1) }), false},
		{"anthropic-version changed", with(func(r *plainReq) { r.header.Set("Anthropic-Version", "2024-01-01") }), false},
		{"anthropic-beta changed", with(func(r *plainReq) { r.header.Set("Anthropic-Beta", "b1") }), false},
		{"method changed", with(func(r *plainReq) { r.method = "PUT" }), false},
		{"query changed", with(func(r *plainReq) { r.path = "/v1/messages?beta=false" }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, Config{AllowUnused: true})
			require.NoError(t, err)
			defer c.Close()
			resp, err := send(c.Client(), srv.URL, tt.req)
			if tt.match {
				require.NoError(t, err)
				require.Contains(t, readAll(t, resp), `"n":1`)
				return
			}
			// The request carries X-Stainless-* headers: its miss is a
			// response whose body returns it (see missanswer.go).
			require.NoError(t, err)
			require.Equal(t, http.StatusNotFound, resp.StatusCode)
			_, err = io.ReadAll(resp.Body)
			require.ErrorIs(t, err, ErrInteractionNotFound)
		})
	}
}

func TestNonJSONBodyMatchesBytes(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/p", body: "a b"}
	path := recordPlain(t, t.TempDir(), "c", srv, []plainReq{r})
	c, err := Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	_, err = send(c.Client(), srv.URL, plainReq{method: "POST", path: "/p", body: "a  b"})
	require.ErrorIs(t, err, ErrInteractionNotFound)
	require.Contains(t, readAll(t, do(t, c.Client(), srv.URL, r)), `"n":1`)
}

func TestIdenticalRequestsReplayInOrder(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/p", body: `{"same":true}`}
	path := recordPlain(t, t.TempDir(), "c", srv, []plainReq{r, r, r})
	c, err := Open(path, Config{})
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		require.Contains(t, readAll(t, do(t, c.Client(), srv.URL, r)), fmt.Sprintf(`"n":%d`, i))
	}
	_, err = send(c.Client(), srv.URL, r)
	var me *MissError
	require.ErrorAs(t, err, &me)
	require.True(t, me.Exhausted, "a cassette used up by one run")
	require.ErrorIs(t, err, ErrInteractionNotFound)
	require.ErrorContains(t, err, "cassette exhausted: open it per run")
	require.NoError(t, c.Close())

	// With interactions left, the same request once too often is a miss.
	other := plainReq{method: "POST", path: "/q", body: `{}`}
	path = recordPlain(t, t.TempDir(), "c", srv, []plainReq{r, other})
	c, err = Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	readAll(t, do(t, c.Client(), srv.URL, r))
	_, err = send(c.Client(), srv.URL, r)
	require.ErrorIs(t, err, ErrInteractionNotFound)
	require.ErrorContains(t, err, "all 1 recorded interactions with this request were already replayed (the last at line")
}

func TestMissExplainsItself(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	recorded := plainReq{method: "POST", path: "/v1/messages", body: `{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"fix lodash"}]}`}
	other := plainReq{method: "POST", path: "/v1/other", body: `{"q":1}`}
	path := recordPlain(t, dir, "miss", srv, []plainReq{other, recorded})
	c, err := Open(path, Config{Hint: "rerecord-this-cassette", AllowUnused: true})
	require.NoError(t, err)
	secret := "sk-ant-api03-" + strings.Repeat("Z", 40)
	_, err = send(c.Client(), srv.URL, plainReq{method: "POST", path: "/v1/messages",
		body: `{"model":"claude-y","max_tokens":100,"messages":[{"role":"user","content":"fix lodash ` + secret + `"}]}`})
	require.ErrorIs(t, err, ErrInteractionNotFound)
	var ce *CassetteError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, path, ce.Path)
	require.Equal(t, "replay", ce.Op)
	require.Positive(t, ce.Line, "names the nearest interaction's line")
	msg := err.Error()
	for _, want := range []string{
		"POST " + srv.URL + "/v1/messages",
		"body blake3 ",
		path,
		"nearest recorded interaction: 1 (line",
		`["model"]`,
		`"claude-x"`,
		`"claude-y"`,
		`["messages"][0]["content"]`,
		"re-record with: rerecord-this-cassette",
	} {
		require.Contains(t, msg, want)
	}
	require.NotContains(t, msg, secret)
	require.NotContains(t, msg, strings.Repeat("Z", 20))
}

func TestUnusedInteractions(t *testing.T) {
	srv := echoServer(t)
	a := plainReq{method: "POST", path: "/a", body: `{}`}
	b := plainReq{method: "POST", path: "/b", body: `{}`}
	path := recordPlain(t, t.TempDir(), "c", srv, []plainReq{a, b})
	tests := []struct {
		name        string
		allowUnused bool
		wantErr     error
	}{
		{"unused is an error", false, ErrUnusedInteractions},
		{"allowed", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(path, Config{AllowUnused: tt.allowUnused})
			require.NoError(t, err)
			readAll(t, do(t, c.Client(), srv.URL, a))
			err = c.Close()
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorContains(t, err, "interaction 1 (line")
			require.ErrorContains(t, err, "/b")
		})
	}
}

func TestConcurrentReplays(t *testing.T) {
	srv := echoServer(t)
	const n = 50
	reqs := make([]plainReq, n)
	for i := range reqs {
		reqs[i] = plainReq{method: "POST", path: "/v1/messages", body: fmt.Sprintf(`{"i":%d}`, i%10)}
	}
	path := recordPlain(t, t.TempDir(), "c", srv, reqs)
	c, err := Open(path, Config{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			resp, err := send(c.Client(), srv.URL, reqs[i])
			if err != nil {
				errs[i] = err
				return
			}
			// Every caller mutates its own headers and reads its own body.
			resp.Header.Set("X-Mine", fmt.Sprint(i))
			resp.Header.Del("Request-Id")
			resp.Request.Header.Set("X-Mine", "x")
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && !strings.Contains(string(b), fmt.Sprintf(`\"i\":%d`, i%10)) {
				err = fmt.Errorf("request %d got %s", i, b)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.NoError(t, c.Close())
}

func TestSSEReplaysFrameByFrame(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/stream", body: `{"stream":true}`}
	path := recordPlain(t, t.TempDir(), "sse", srv, []plainReq{r})
	c, err := Open(path, Config{})
	require.NoError(t, err)
	resp := do(t, c.Client(), srv.URL, r)
	defer resp.Body.Close()
	var frames []string
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			frames = append(frames, string(buf[:n]))
		}
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	require.Equal(t, sseBody, strings.Join(frames, ""), "byte-identical")
	require.Equal(t, []string{"event: a\ndata: {\"i\":1}\n\n", "event: b\ndata: {\"i\":2}\n\n", ": comment\n\n", "event: c\ndata: {\"i\":3}\n\n"}, frames)
	require.NoError(t, c.Close())
}

func TestReplayBodyStopsWhenContextDone(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/stream", body: `{}`}
	path := recordPlain(t, t.TempDir(), "sse", srv, []plainReq{r})
	c, err := Open(path, Config{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/stream", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp, err := c.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = resp.Body.Read(make([]byte, 100))
	require.NoError(t, err)
	cancel()
	_, err = resp.Body.Read(make([]byte, 100))
	require.ErrorIs(t, err, context.Canceled)
}

func TestRecordRedactsCopyNotLiveRequest(t *testing.T) {
	srv := echoServer(t)
	path := filepath.Join(t.TempDir(), "rec.yaml")
	c, err := Open(path, Config{Mode: Record, RealTransport: srv.Client().Transport, APIKey: "live-key-123"})
	require.NoError(t, err)
	require.Empty(t, c.ID())
	req, err := http.NewRequest("POST", srv.URL+"/v1/messages?key=live-key-123", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", "live-key-123")
	req.Header.Set("Authorization", "Bearer live-key-123")
	req.Header.Set("User-Agent", "Anthropic/Go 1.84.0")
	req.Header.Set("X-Stainless-Os", "Linux")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := c.Client().Do(req)
	require.NoError(t, err)
	body := readAll(t, resp)
	require.Contains(t, body, `"n":1`)
	require.Equal(t, "req_1", resp.Header.Get("Request-Id"), "the caller sees the live response")
	require.NoError(t, c.Close())
	require.Equal(t, "live-key-123", req.Header.Get("X-Api-Key"), "the live request is not mutated")
	require.Equal(t, "Bearer live-key-123", req.Header.Get("Authorization"))
	require.Equal(t, "req_1", resp.Header.Get("Request-Id"))
	require.Len(t, c.ID(), 64)

	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(saved)
	require.NotContains(t, s, "live-key-123")
	require.NotContains(t, s, "User-Agent")
	require.NotContains(t, s, "X-Stainless")
	require.NotContains(t, s, "req_1")
	require.NotContains(t, s, "2026")
	require.Contains(t, s, normalizedDate)
	require.Contains(t, s, "Anthropic-Version")
	d, err := Digest(path)
	require.NoError(t, err)
	require.Equal(t, c.ID(), d)

	// The saved cassette replays with a different key and SDK headers.
	r2, err := Open(path, Config{})
	require.NoError(t, err)
	req2, err := http.NewRequest("POST", srv.URL+"/v1/messages?key=other", strings.NewReader(`{"a": 1}`))
	require.NoError(t, err)
	req2.Header.Set("X-Api-Key", "other")
	req2.Header.Set("Anthropic-Version", "2023-06-01")
	resp2, err := r2.Client().Do(req2)
	require.NoError(t, err)
	require.Equal(t, body, readAll(t, resp2))
	require.NoError(t, r2.Close())
}

func TestSecretRefusedAtSave(t *testing.T) {
	tests := []struct {
		name     string
		respBody string
		want     string
	}{
		{"recording key echoed in the body", `{"echo":"my-recording-key"}`, "the API key used for recording"},
		{"anthropic key shape", `{"k":"sk-ant-api03-abcdefghijklmnop"}`, "an Anthropic API key"},
		{"bearer token", `{"h":"Bearer Q8wE3rT6yU1iO9pA4sD7fG2hJ5kL"}`, "a bearer token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.yaml")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
			rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
					Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(tt.respBody)), Request: r}, nil
			})
			c, err := Open(path, Config{Mode: Record, RealTransport: rt, APIKey: "my-recording-key"})
			require.NoError(t, err)
			readAll(t, do(t, c.Client(), "https://api.example.com", plainReq{method: "POST", path: "/v1/messages", body: `{}`}))
			err = c.Close()
			require.ErrorIs(t, err, errSecret)
			var ce *CassetteError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, "save", ce.Op)
			require.Positive(t, ce.Line)
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "my-recording-key")
			require.Equal(t, map[string][]byte{"s.yaml": []byte("old")}, dirSnapshot(t, dir), "nothing written")
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRecordWriteFailsMidway(t *testing.T) {
	srv := echoServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte("the old cassette"), 0o644))
	before := dirSnapshot(t, dir)
	c, err := Open(path, Config{Mode: Record, RealTransport: srv.Client().Transport, createTemp: failingCreate})
	require.NoError(t, err)
	readAll(t, do(t, c.Client(), srv.URL, plainReq{method: "POST", path: "/x", body: `{}`}))
	err = c.Close()
	var ce *CassetteError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "write", ce.Op)
	require.ErrorContains(t, err, "previous file is unchanged")
	require.Equal(t, before, dirSnapshot(t, dir), "old file unchanged, no temp file left")
}

func TestOpenRejects(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "x.json"), Config{})
	require.ErrorContains(t, err, "must end in .yaml")
	_, err = Open(filepath.Join(t.TempDir(), "x.yaml"), Config{Mode: Mode(7)})
	require.ErrorContains(t, err, "unknown mode")
}

func TestUseAfterClose(t *testing.T) {
	srv := echoServer(t)
	r := plainReq{method: "POST", path: "/x", body: `{}`}
	path := recordPlain(t, t.TempDir(), "c", srv, []plainReq{r})
	c, err := Open(path, Config{AllowUnused: true})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, err = send(c.Client(), srv.URL, r)
	require.ErrorIs(t, err, errClosed)
}
