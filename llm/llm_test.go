package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/codegenie/codegenie/llm"
)

const testModel = "claude-test-1"

// recorder is a RoundTripper that remembers the requests it forwards.
type recorder struct {
	mu   sync.Mutex
	next http.RoundTripper
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *recorder) last(t testing.TB) *http.Request {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.reqs, "no request reached the transport")
	return r.reqs[len(r.reqs)-1]
}

// wiring is one way of reaching fakellm.
type wiring struct {
	name  string
	setup func(t testing.TB, cfg fakellm.Config) (baseURL string, client *http.Client, srv *fakellm.Server)
}

var wirings = []wiring{
	{"transport", func(t testing.TB, cfg fakellm.Config) (string, *http.Client, *fakellm.Server) {
		s := fakellm.New(cfg)
		return "http://fakellm.invalid", &http.Client{Transport: s.Transport()}, s
	}},
	{"httptest", func(t testing.TB, cfg fakellm.Config) (string, *http.Client, *fakellm.Server) {
		hs, s := fakellm.NewHTTPTest(t, cfg)
		return hs.URL, hs.Client(), s
	}},
}

func newAnthropic(t testing.TB, base string, c *http.Client, stream bool) *llm.Anthropic {
	t.Helper()
	a, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "test-key", BaseURL: base, Model: testModel, Stream: stream, HTTPClient: c})
	require.NoError(t, err)
	return a
}

func TestAnthropicComplete(t *testing.T) {
	req := llm.Request{System: "be terse", Prompt: "hello, wörld ✓ — a prompt long enough to span several stream chunks"}
	want := llm.Response{
		Text:        "fakellm echo: " + req.Prompt,
		Model:       testModel,
		StopReason:  "end_turn",
		InputTokens: int64((len(req.System)+3)/4 + (len(req.Prompt)+3)/4),
	}
	want.OutputTokens = int64((len(want.Text) + 3) / 4)
	for _, w := range wirings {
		var got []llm.Response
		for _, stream := range []bool{false, true} {
			name := w.name + "/json"
			if stream {
				name = w.name + "/sse"
			}
			t.Run(name, func(t *testing.T) {
				base, client, srv := w.setup(t, fakellm.Config{APIKey: "test-key", ChunkSize: 3})
				a := newAnthropic(t, base, client, stream)
				res, err := a.Complete(context.Background(), req)
				require.NoError(t, err)
				require.True(t, strings.HasPrefix(res.ID, "msg_fake_"), "id %q", res.ID)
				id := res.ID
				res.ID = ""
				if diff := pretty.Diff(want, res); len(diff) > 0 {
					t.Fatalf("response differs:\n%s", strings.Join(diff, "\n"))
				}
				res.ID = id
				require.Equal(t, int64(1), srv.Calls())
				got = append(got, res)
			})
		}
		require.Len(t, got, 2)
		require.Equal(t, got[0], got[1], "%s: JSON and SSE answers differ", w.name)
	}
}

func TestAnthropicSettings(t *testing.T) {
	c := &http.Client{Transport: fakellm.New(fakellm.Config{}).Transport()}
	a, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: testModel, Stream: true, HTTPClient: c})
	require.NoError(t, err)
	require.Equal(t, llm.Settings{
		Provider: "anthropic", Model: testModel, Temperature: 0,
		MaxTokens: llm.DefaultMaxTokens, Stream: true, APIVersion: "2026-10-21",
	}, a.Settings())
}

// TestAnthropicWireRequest checks what the SDK puts on the wire: the pinned
// model, max_tokens, no temperature (the API version takes none), our key
// and base URL, no retry.
func TestAnthropicWireRequest(t *testing.T) {
	rec := &recorder{next: fakellm.New(fakellm.Config{}).Transport()}
	a, err := llm.NewAnthropic(llm.AnthropicConfig{
		APIKey: "key-1", BaseURL: "http://models.example:9/api", Model: testModel, MaxTokens: 77,
		HTTPClient: &http.Client{Transport: rec},
	})
	require.NoError(t, err)
	bodies := make([]string, 2)
	for i := range bodies {
		_, err = a.Complete(context.Background(), llm.Request{System: "sys", Prompt: "p"})
		require.NoError(t, err)
		b, err := rec.last(t).GetBody()
		require.NoError(t, err)
		var sb strings.Builder
		_, err = ioCopy(&sb, b)
		require.NoError(t, err)
		bodies[i] = sb.String()
	}
	require.Equal(t, bodies[0], bodies[1], "the SDK must encode a request the same way every time")
	r := rec.last(t)
	require.Equal(t, "http://models.example:9/api/v1/messages", r.URL.String())
	require.Equal(t, "Bearer key-1", r.Header.Get("Authorization"), "anthropic-sdk-go v2 sends the key as a bearer token")
	require.Empty(t, r.Header.Get("X-Api-Key"))
	require.Equal(t, llm.AnthropicAPIVersion, r.Header.Get("Anthropic-Version"))
	require.Empty(t, r.Header.Get("Traceparent"))
	body, err := r.GetBody()
	require.NoError(t, err)
	var sb strings.Builder
	_, err = ioCopy(&sb, body)
	require.NoError(t, err)
	require.JSONEq(t, `{"max_tokens":77,"messages":[{"content":[{"text":"p","type":"text"}],"role":"user"}],
		"model":"claude-test-1","system":[{"text":"sys","type":"text"}]}`, sb.String())
}

// TestAnthropicIgnoresEnvironment sets every variable the SDK would
// otherwise honour to a bogus value and shows none of them is used.
func TestAnthropicIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://bogus.invalid:1")
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_PROFILE", "no-such-profile")
	t.Setenv("ANTHROPIC_CONFIG_DIR", t.TempDir())
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Env-Header: leaked")
	t.Setenv("ANTHROPIC_OPEN_TELEMETRY", "true")
	for _, stream := range []bool{false, true} {
		rec := &recorder{next: fakellm.New(fakellm.Config{APIKey: "explicit-key"}).Transport()}
		a, err := llm.NewAnthropic(llm.AnthropicConfig{
			APIKey: "explicit-key", BaseURL: "http://explicit.invalid", Model: testModel, Stream: stream,
			HTTPClient: &http.Client{Transport: rec},
		})
		require.NoError(t, err)
		res, err := a.Complete(context.Background(), llm.Request{Prompt: "env"})
		require.NoError(t, err)
		require.Equal(t, "fakellm echo: env", res.Text)
		r := rec.last(t)
		require.Equal(t, "explicit.invalid", r.URL.Host)
		require.Equal(t, "Bearer explicit-key", r.Header.Get("Authorization"))
		require.Empty(t, r.Header.Get("X-Api-Key"))
		require.Empty(t, r.Header.Get("X-Env-Header"))
	}
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		name     string
		cfg      fakellm.Config
		key      string
		stream   bool
		status   int
		bodyPart string
		sentinel error
	}{
		{name: "overloaded json", cfg: fakellm.Config{Mode: fakellm.HTTPError, Status: 529}, status: 529, bodyPart: "overloaded_error"},
		{name: "overloaded sse", cfg: fakellm.Config{Mode: fakellm.HTTPError, Status: 529}, stream: true, status: 529, bodyPart: "overloaded_error"},
		{name: "server error default", cfg: fakellm.Config{Mode: fakellm.HTTPError}, status: 500, bodyPart: "api_error"},
		{name: "bad key", cfg: fakellm.Config{APIKey: "right"}, key: "wrong", status: 401, bodyPart: "authentication_error"},
		{name: "empty json", cfg: fakellm.Config{Mode: fakellm.Empty}, sentinel: llm.ErrEmptyCompletion},
		{name: "empty sse", cfg: fakellm.Config{Mode: fakellm.Empty}, stream: true, sentinel: llm.ErrEmptyCompletion},
		{name: "truncated sse", cfg: fakellm.Config{Mode: fakellm.Truncated}, stream: true, sentinel: llm.ErrTruncatedStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(tt.cfg)
			key := tt.key
			if key == "" {
				key = tt.cfg.APIKey
			}
			if key == "" {
				key = "secret-key-123"
			}
			a, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: key, Model: testModel, Stream: tt.stream, HTTPClient: &http.Client{Transport: srv.Transport()}})
			require.NoError(t, err)
			_, err = a.Complete(context.Background(), llm.Request{Prompt: "x"})
			require.Error(t, err)
			require.Equal(t, int64(1), srv.Calls(), "the adapter must not retry")
			if tt.sentinel != nil {
				require.ErrorIs(t, err, tt.sentinel)
				return
			}
			var ae *llm.APIError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, "anthropic", ae.Provider)
			require.Equal(t, tt.status, ae.Status)
			require.Contains(t, ae.Body, tt.bodyPart)
			require.NotContains(t, err.Error(), key)
		})
	}
}

func TestAnthropicTransportError(t *testing.T) {
	sentinel := errors.New("cassette miss")
	c := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, sentinel })}
	for _, stream := range []bool{false, true} {
		a, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: testModel, Stream: stream, HTTPClient: c})
		require.NoError(t, err)
		_, err = a.Complete(context.Background(), llm.Request{Prompt: "x"})
		require.ErrorIs(t, err, sentinel)
		var ae *llm.APIError
		require.False(t, errors.As(err, &ae), "a transport error is not an APIError")
	}
}

func TestAnthropicCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := newAnthropic(t, "", &http.Client{Transport: fakellm.New(fakellm.Config{}).Transport()}, false)
	_, err := a.Complete(ctx, llm.Request{Prompt: "x"})
	require.ErrorIs(t, err, context.Canceled)
}

func TestEmptyRequest(t *testing.T) {
	c := &http.Client{Transport: fakellm.New(fakellm.Config{}).Transport()}
	a := newAnthropic(t, "", c, false)
	_, err := a.Complete(context.Background(), llm.Request{System: "s"})
	require.ErrorIs(t, err, llm.ErrEmptyRequest)
	o, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", HTTPClient: c})
	require.NoError(t, err)
	_, err = o.Complete(context.Background(), llm.Request{})
	require.ErrorIs(t, err, llm.ErrEmptyRequest)
}

func TestConfigValidation(t *testing.T) {
	c := http.DefaultClient
	tests := []struct {
		name  string
		build func() error
		field string
	}{
		{"anthropic no key", func() error {
			_, err := llm.NewAnthropic(llm.AnthropicConfig{Model: "m", HTTPClient: c})
			return err
		}, "APIKey"},
		{"anthropic no model", func() error {
			_, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: " ", HTTPClient: c})
			return err
		}, "Model"},
		{"anthropic negative max", func() error {
			_, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "m", MaxTokens: -1, HTTPClient: c})
			return err
		}, "MaxTokens"},
		{"anthropic no client", func() error {
			_, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "m"})
			return err
		}, "HTTPClient"},
		{"anthropic relative url", func() error {
			_, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "m", BaseURL: "localhost:8080", HTTPClient: c})
			return err
		}, "BaseURL"},
		{"anthropic bad url", func() error {
			_, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "m", BaseURL: "http://[::1", HTTPClient: c})
			return err
		}, "BaseURL"},
		{"openai no model", func() error {
			_, err := llm.NewOpenAI(llm.OpenAIConfig{HTTPClient: c})
			return err
		}, "Model"},
		{"openai negative max", func() error {
			_, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", MaxTokens: -5, HTTPClient: c})
			return err
		}, "MaxTokens"},
		{"openai no client", func() error {
			_, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m"})
			return err
		}, "HTTPClient"},
		{"openai bad scheme", func() error {
			_, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", BaseURL: "ftp://x", HTTPClient: c})
			return err
		}, "BaseURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.build()
			require.ErrorIs(t, err, llm.ErrInvalidConfig)
			require.Contains(t, err.Error(), tt.field)
		})
	}
}

func TestOpenAIComplete(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			base, client, srv := w.setup(t, fakellm.Config{APIKey: "sk-test"})
			o, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: base + "/", Model: "local-7b", MaxTokens: 1000, HTTPClient: client})
			require.NoError(t, err)
			require.Equal(t, llm.Settings{Provider: "openai", Model: "local-7b", MaxTokens: 1000, APIVersion: "v1/chat/completions"}, o.Settings())
			req := llm.Request{System: "sys", Prompt: "hi there"}
			res, err := o.Complete(context.Background(), req)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(res.ID, "chatcmpl-fake-"), res.ID)
			res.ID = ""
			require.Equal(t, llm.Response{Text: "fakellm echo: hi there", Model: "local-7b", StopReason: "stop", InputTokens: 1 + 2, OutputTokens: 6}, res)
			require.Equal(t, int64(1), srv.Calls())
		})
	}
}

func TestOpenAIStream(t *testing.T) {
	for _, w := range wirings {
		t.Run(w.name, func(t *testing.T) {
			base, client, _ := w.setup(t, fakellm.Config{APIKey: "sk-test", ChunkSize: 3})
			o, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "sk-test", BaseURL: base, Model: "local-7b", Stream: true, HTTPClient: client})
			require.NoError(t, err)
			require.True(t, o.Settings().Stream)
			res, err := o.Complete(context.Background(), llm.Request{System: "sys", Prompt: "hi there"})
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(res.ID, "chatcmpl-fake-"), res.ID)
			res.ID = ""
			require.Equal(t, llm.Response{Text: "fakellm echo: hi there", Model: "local-7b", StopReason: "stop", InputTokens: 1 + 2, OutputTokens: 6}, res)
		})
	}
	c := &http.Client{Transport: fakellm.New(fakellm.Config{Mode: fakellm.Truncated}).Transport()}
	o, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", Stream: true, HTTPClient: c})
	require.NoError(t, err)
	_, err = o.Complete(context.Background(), llm.Request{Prompt: "x"})
	require.ErrorIs(t, err, llm.ErrTruncatedStream)
}

func TestOpenAIWireRequest(t *testing.T) {
	rec := &recorder{next: fakellm.New(fakellm.Config{}).Transport()}
	o, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: "http://127.0.0.1:1", Model: "m", HTTPClient: &http.Client{Transport: rec}})
	require.NoError(t, err)
	_, err = o.Complete(context.Background(), llm.Request{Prompt: "<p> & q"})
	require.NoError(t, err)
	r := rec.last(t)
	require.Equal(t, "http://127.0.0.1:1/v1/chat/completions", r.URL.String())
	require.Empty(t, r.Header.Get("Authorization"), "no key, no header")
	body, err := r.GetBody()
	require.NoError(t, err)
	var sb strings.Builder
	_, err = ioCopy(&sb, body)
	require.NoError(t, err)
	require.Equal(t, `{"messages":[{"content":"<p> & q","role":"user"}],"model":"m","max_tokens":4096,"temperature":0}`, sb.String(), "the SDK's encoding")
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		status   int
		sentinel error
		text     string
	}{
		{name: "server error", handler: fakellm.New(fakellm.Config{Mode: fakellm.HTTPError, Status: 503}).ServeHTTP, status: 503},
		{name: "unauthorized", handler: fakellm.New(fakellm.Config{APIKey: "other"}).ServeHTTP, status: 401},
		{name: "empty", handler: fakellm.New(fakellm.Config{Mode: fakellm.Empty}).ServeHTTP, sentinel: llm.ErrEmptyCompletion},
		{name: "no choices", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"x","model":"m","choices":[]}`))
		}, sentinel: llm.ErrEmptyCompletion},
		{name: "not json", handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`<html>proxy error</html>`))
		}, text: "content-type 'text/html; charset=utf-8' that is not 'application/json'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", Model: "m", HTTPClient: &http.Client{Transport: handlerTransport(tt.handler)}})
			require.NoError(t, err)
			_, err = o.Complete(context.Background(), llm.Request{Prompt: "x"})
			require.Error(t, err)
			switch {
			case tt.sentinel != nil:
				require.ErrorIs(t, err, tt.sentinel)
			case tt.text != "":
				require.Contains(t, err.Error(), tt.text)
			default:
				var ae *llm.APIError
				require.ErrorAs(t, err, &ae)
				require.Equal(t, "openai", ae.Provider)
				require.Equal(t, tt.status, ae.Status)
				require.Contains(t, ae.Body, `"message"`)
			}
		})
	}
}

func TestAPIErrorExcerptIsBounded(t *testing.T) {
	big := strings.Repeat("é", 2000)
	h := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(502)
		_, _ = w.Write([]byte(big))
	}
	o, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", HTTPClient: &http.Client{Transport: handlerTransport(h)}})
	require.NoError(t, err)
	_, err = o.Complete(context.Background(), llm.Request{Prompt: "x"})
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	require.LessOrEqual(t, len(ae.Body), llm.MaxBodyExcerpt+len("…"))
	require.True(t, strings.HasSuffix(ae.Body, "…"))
	require.True(t, strings.HasPrefix(big, strings.TrimSuffix(ae.Body, "…")))
}

// TestInSynctestBubble runs both adapters inside a synctest bubble over the
// in-process transport: no sockets, no goroutine left behind.
func TestInSynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &http.Client{Transport: fakellm.New(fakellm.Config{}).Transport()}
		for _, stream := range []bool{false, true} {
			a := newAnthropic(t, "", c, stream)
			res, err := a.Complete(t.Context(), llm.Request{Prompt: "bubble"})
			require.NoError(t, err)
			require.Equal(t, "fakellm echo: bubble", res.Text)
		}
		for _, stream := range []bool{false, true} {
			o, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", Stream: stream, HTTPClient: c})
			require.NoError(t, err)
			res, err := o.Complete(t.Context(), llm.Request{Prompt: "bubble"})
			require.NoError(t, err)
			require.Equal(t, "fakellm echo: bubble", res.Text)
		}
	})
}

func TestConcurrentComplete(t *testing.T) {
	srv := fakellm.New(fakellm.Config{ChunkSize: 5})
	c := &http.Client{Transport: srv.Transport()}
	adapters := []llm.Adapter{newAnthropic(t, "", c, false), newAnthropic(t, "", c, true)}
	o, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "m", HTTPClient: c})
	require.NoError(t, err)
	adapters = append(adapters, o)
	const n = 8
	results := make([][]llm.Response, len(adapters))
	errs := make([][]error, len(adapters))
	var wg sync.WaitGroup
	for i, a := range adapters {
		results[i] = make([]llm.Response, n)
		errs[i] = make([]error, n)
		for j := range n {
			wg.Go(func() {
				results[i][j], errs[i][j] = a.Complete(context.Background(), llm.Request{Prompt: "same prompt"})
			})
		}
	}
	wg.Wait()
	for i := range adapters {
		for j := range n {
			require.NoError(t, errs[i][j])
			require.Equal(t, results[i][0], results[i][j])
		}
	}
	require.Equal(t, int64(len(adapters)*n), srv.Calls())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// handlerTransport serves requests with h in-process.
func handlerTransport(h http.HandlerFunc) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rw := newResponse(r)
		h(rw, r)
		return rw.result(), nil
	})
}
