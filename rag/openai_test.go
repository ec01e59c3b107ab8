package rag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/guard"
)

// fakeEmbeddings serves POST /v1/embeddings in the OpenAI wire format. Each
// input embeds to [len(input), index+1, 1] (or the first dims of that),
// returned in reverse order so that the client must sort by index.
type fakeEmbeddings struct {
	requests []map[string]any // decoded request bodies
	auth     []string
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"no route"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model          string   `json:"model"`
		Input          []string `json:"input"`
		EncodingFormat string   `json:"encoding_format"`
		Dimensions     int      `json:"dimensions"`
	}
	raw, _ := io.ReadAll(r.Body)
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.requests = append(f.requests, generic)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	_ = json.Unmarshal(raw, &req)
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var data []datum
	for i := len(req.Input) - 1; i >= 0; i-- {
		v := []float64{float64(len(req.Input[i])), float64(i + 1), 1}
		if req.Dimensions > 0 && req.Dimensions < len(v) {
			v = v[:req.Dimensions]
		}
		data = append(data, datum{"embedding", i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}

// newFakeServer starts a loopback server closed at the end of the test.
func newFakeServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenAIEmbedderWireFormat(t *testing.T) {
	fake := &fakeEmbeddings{}
	srv := newFakeServer(t, fake)
	o := &OpenAIEmbedder{Client: srv.Client(), BaseURL: srv.URL + "/", Model: "text-embedding-3-small", APIKey: "sk-secret"}
	got, err := o.Embed(context.Background(), []string{"a", "bcd", "ef"})
	require.NoError(t, err)
	require.Equal(t, [][]float64{{1, 1, 1}, {3, 2, 1}, {2, 3, 1}}, got)
	require.Len(t, fake.requests, 1)
	require.Equal(t, map[string]any{
		"model": "text-embedding-3-small", "input": []any{"a", "bcd", "ef"}, "encoding_format": "float",
	}, fake.requests[0], "no dimensions field when Dims is 0")
	require.Equal(t, []string{"Bearer sk-secret"}, fake.auth)
}

func TestOpenAIEmbedderDims(t *testing.T) {
	fake := &fakeEmbeddings{}
	srv := newFakeServer(t, fake)
	o := &OpenAIEmbedder{Client: srv.Client(), BaseURL: srv.URL, Model: "m", Dims: 2}
	got, err := o.Embed(context.Background(), []string{"xy"})
	require.NoError(t, err)
	require.Equal(t, [][]float64{{2, 1}}, got)
	require.Equal(t, float64(2), fake.requests[0]["dimensions"])
	require.Equal(t, []string{""}, fake.auth, "no Authorization header without an API key")
	require.Equal(t, 2, o.Dimensions())
}

func TestOpenAIEmbedderBatches(t *testing.T) {
	fake := &fakeEmbeddings{}
	srv := newFakeServer(t, fake)
	o := &OpenAIEmbedder{Client: srv.Client(), BaseURL: srv.URL, Model: "m"}
	texts := make([]string, MaxInputsPerRequest+3)
	for i := range texts {
		texts[i] = strings.Repeat("x", i%10)
	}
	got, err := o.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, fake.requests, 2)
	require.Len(t, got, len(texts))
	last := len(texts) - 1
	require.Equal(t, []float64{float64(last % 10), float64(last - MaxInputsPerRequest + 1), 1}, got[last])
}

func TestOpenAIEmbedderErrors(t *testing.T) {
	respond := func(status int, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		})
	}
	long := `{"error":{"message":"` + strings.Repeat("z", 2000) + `"}}`
	tests := []struct {
		name       string
		handler    http.Handler
		texts      []string
		dims       int
		wantStatus int
		wantInMsg  []string
		wantBody   bool
	}{
		{name: "unauthorised", handler: respond(401, `{"error":{"message":"Incorrect API key provided: sk-secret"}}`), texts: []string{"a"},
			wantStatus: 401, wantInMsg: []string{"401", "Incorrect API key", "/v1/embeddings"}, wantBody: true},
		{name: "rate limited, long body is cut", handler: respond(429, long), texts: []string{"a"},
			wantStatus: 429, wantInMsg: []string{"429 Too Many Requests", "zzz..."}, wantBody: true},
		{name: "server error", handler: respond(500, "boom"), texts: []string{"a"}, wantStatus: 500, wantInMsg: []string{"500", "boom"}},
		{name: "not JSON", handler: respond(200, "<html>"), texts: []string{"a"}, wantStatus: 200, wantInMsg: []string{"decoding response"}},
		{name: "too few embeddings", handler: respond(200, `{"data":[{"index":0,"embedding":[1]}]}`), texts: []string{"a", "b"},
			wantStatus: 200, wantInMsg: []string{"got 1 embeddings for 2 inputs"}},
		{name: "repeated index", handler: respond(200, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`), texts: []string{"a", "b"},
			wantStatus: 200, wantInMsg: []string{"index 0"}},
		{name: "index out of range", handler: respond(200, `{"data":[{"index":5,"embedding":[1]}]}`), texts: []string{"a"},
			wantStatus: 200, wantInMsg: []string{"index 5"}},
		{name: "wrong dimensions", handler: respond(200, `{"data":[{"index":0,"embedding":[1,2]}]}`), texts: []string{"a"}, dims: 3,
			wantStatus: 200, wantInMsg: []string{"2 dimensions, want 3"}},
		{name: "ragged dimensions", handler: respond(200, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`), texts: []string{"a", "b"},
			wantStatus: 200, wantInMsg: []string{"1 dimensions, want 2"}},
		{name: "empty embedding", handler: respond(200, `{"data":[{"index":0,"embedding":[]}]}`), texts: []string{"a"},
			wantStatus: 200, wantInMsg: []string{"embedding 0 is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, tc.handler)
			o := &OpenAIEmbedder{Client: srv.Client(), BaseURL: srv.URL, Model: "m", APIKey: "sk-secret", Dims: tc.dims}
			_, err := o.Embed(context.Background(), tc.texts)
			require.ErrorIs(t, err, ErrEmbeddingAPI)
			var ae *APIError
			require.True(t, errors.As(err, &ae))
			require.Equal(t, tc.wantStatus, ae.StatusCode)
			require.LessOrEqual(t, len(ae.Body), maxErrorBody+len("..."))
			if tc.wantBody {
				require.NotEmpty(t, ae.Body)
			}
			for _, s := range tc.wantInMsg {
				require.Contains(t, err.Error(), s)
			}
			require.NotContains(t, err.Error(), "sk-secret", "the API key must never appear in an error")
		})
	}
}

func TestOpenAIEmbedderTransportError(t *testing.T) {
	failing := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("dial refused for %s", r.Header.Get("Authorization"))
	})}
	o := &OpenAIEmbedder{Client: failing, BaseURL: "http://127.0.0.1:1", Model: "m", APIKey: "sk-secret"}
	_, err := o.Embed(context.Background(), []string{"a"})
	require.ErrorIs(t, err, ErrEmbeddingAPI)
	require.Contains(t, err.Error(), "dial refused")
	require.NotContains(t, err.Error(), "sk-secret")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestOpenAIEmbedderConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		o    OpenAIEmbedder
	}{
		{name: "nil client", o: OpenAIEmbedder{Model: "m"}},
		{name: "no model", o: OpenAIEmbedder{Client: http.DefaultClient}},
		{name: "negative dims", o: OpenAIEmbedder{Client: http.DefaultClient, Model: "m", Dims: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.Embed(context.Background(), []string{"a"})
			require.ErrorIs(t, err, ErrBadConfig)
		})
	}
}

func TestOpenAIEmbedderDigest(t *testing.T) {
	base := OpenAIEmbedder{BaseURL: "https://api.openai.com", Model: "text-embedding-3-small", Dims: 256, APIKey: "k1"}
	d0 := base.Digest()
	tests := []struct {
		name    string
		mut     func(*OpenAIEmbedder)
		changes bool
	}{
		{name: "model", mut: func(o *OpenAIEmbedder) { o.Model = "text-embedding-3-large" }, changes: true},
		{name: "dims", mut: func(o *OpenAIEmbedder) { o.Dims = 0 }, changes: true},
		{name: "base URL is not pinned", mut: func(o *OpenAIEmbedder) { o.BaseURL = "http://127.0.0.1:8080" }},
		{name: "API key is not pinned", mut: func(o *OpenAIEmbedder) { o.APIKey = "k2" }},
		{name: "client is not pinned", mut: func(o *OpenAIEmbedder) { o.Client = &http.Client{} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.mut(&o)
			if tc.changes {
				require.NotEqual(t, d0, o.Digest())
			} else {
				require.Equal(t, d0, o.Digest())
			}
		})
	}
}

// cassetteTransport stands for a replaying cassette: it has a CassetteID.
type cassetteTransport struct{ http.RoundTripper }

func (cassetteTransport) CassetteID() string { return "cassette-1" }

// TestOpenAIEmbedderRefusesLiveCallsInReplay: in replay mode a live
// embedding call is refused before any request; a cassette-backed client
// is served.
func TestOpenAIEmbedderRefusesLiveCallsInReplay(t *testing.T) {
	fake := &fakeEmbeddings{}
	srv := newFakeServer(t, fake)
	replayCtx := guard.WithReplay(context.Background())

	live := &OpenAIEmbedder{Client: srv.Client(), BaseURL: srv.URL, Model: "m"}
	_, err := live.Embed(replayCtx, []string{"a"})
	var rme *guard.ReplayModeError
	require.ErrorAs(t, err, &rme)
	require.Equal(t, opEmbed, rme.Op)
	require.Empty(t, fake.requests, "nothing reached the server")

	replayed := &OpenAIEmbedder{Client: &http.Client{Transport: cassetteTransport{srv.Client().Transport}}, BaseURL: srv.URL, Model: "m"}
	got, err := replayed.Embed(replayCtx, []string{"a"})
	require.NoError(t, err)
	require.Equal(t, [][]float64{{1, 1, 1}}, got)
}
