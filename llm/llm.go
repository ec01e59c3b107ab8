package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	excerptpkg "github.com/codegenie/codegenie/internal/excerpt"
)

// Provider names reported in Settings.Provider and APIError.Provider.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// Wire API versions reported in Settings.APIVersion.
const (
	// AnthropicAPIVersion is the anthropic-version header the SDK
	// (anthropic-sdk-go v2) sends.
	AnthropicAPIVersion = "2026-10-21"
	// OpenAIAPIVersion names the chat-completions path the OpenAI adapter uses.
	OpenAIAPIVersion = "v1/chat/completions"
)

// Default endpoints, used when a config leaves BaseURL empty. They are
// constants: the environment is never consulted.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIBaseURL    = "https://api.openai.com"
)

// DefaultMaxTokens is the completion budget used when a config leaves
// MaxTokens at zero.
const DefaultMaxTokens int64 = 4096

// MaxBodyExcerpt bounds APIError.Body, in bytes.
const MaxBodyExcerpt = 512

var (
	// ErrEmptyCompletion reports a successful response that carries no text.
	ErrEmptyCompletion = errors.New("llm: completion has no text")
	// ErrInvalidConfig reports a config that NewAnthropic or NewOpenAI
	// refuses; the wrapping message names the field and the fix.
	ErrInvalidConfig = errors.New("llm: invalid config")
	// ErrEmptyRequest reports a Request whose Prompt is empty.
	ErrEmptyRequest = errors.New("llm: request has an empty prompt")
)

// Request is one completion request: a system prompt and a single user turn.
type Request struct {
	System string `json:"system"`
	Prompt string `json:"prompt"`
}

// Response is one completion.
type Response struct {
	// Text is the concatenation of the text blocks of the answer, in order.
	Text string `json:"text"`
	// Model is the model that answered, as the server reports it.
	Model string `json:"model"`
	// StopReason is the server's stop reason ("end_turn", "max_tokens",
	// "stop", "length", ...), verbatim.
	StopReason string `json:"stop_reason"`
	// ID is the server's message or completion ID.
	ID string `json:"id"`
	// InputTokens and OutputTokens are the usage the server reports.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Settings is everything about an adapter that can change a completion. The
// pipeline pins it in the RunKey, so two adapters with equal Settings given
// equal requests over the same cassette must give equal responses. Secrets
// (the API key) and the endpoint (BaseURL) are deliberately not part of it.
type Settings struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Temperature is the sampling temperature sent with every request:
	// always 0 for OpenAI. The Anthropic API version the adapter speaks
	// takes none, so it is 0 there and nothing is sent.
	Temperature float64 `json:"temperature"`
	MaxTokens   int64   `json:"max_tokens"`
	Stream      bool    `json:"stream"`
	APIVersion  string  `json:"api_version"`
}

// Adapter completes one request against a model. Implementations are safe for
// concurrent use.
type Adapter interface {
	// Complete sends req and returns the model's answer. A status >= 400 is
	// an *APIError; an answer without text is ErrEmptyCompletion.
	Complete(ctx context.Context, req Request) (Response, error)
	// Settings reports the adapter's pinned settings.
	Settings() Settings
}

// APIError is a response with an HTTP status >= 400 (or, for a stream, an
// error event the server sent mid-stream, with the stream's status).
type APIError struct {
	Provider string // ProviderAnthropic or ProviderOpenAI
	Status   int    // HTTP status code
	Body     string // excerpt of the response body, at most MaxBodyExcerpt bytes
	Err      error  // the underlying error (for Anthropic, the SDK's *anthropic.Error)
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("llm: %s: http status %d", e.Provider, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	switch {
	case e.Status == 401 || e.Status == 403:
		msg += " (check the API key passed in the config)"
	case e.Status == 404:
		msg += " (check BaseURL and Model in the config)"
	case e.Status == 429 || e.Status >= 500:
		msg += " (transient server condition; the adapter does not retry so replays stay exact)"
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *APIError) Unwrap() error { return e.Err }

// excerpt bounds s to MaxBodyExcerpt bytes without splitting a UTF-8
// sequence, trimming surrounding whitespace.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if h := excerptpkg.Head(s, MaxBodyExcerpt); len(h) < len(s) {
		return h + "…"
	}
	return s
}

func configError(provider, msg string) error {
	return fmt.Errorf("llm: %s config: %s: %w", provider, msg, ErrInvalidConfig)
}

// commonConfig checks the settings every adapter shares and applies their
// defaults: base (defaultBase when empty) and maxTokens (DefaultMaxTokens
// when 0). peer names what the client's transport must reach.
func commonConfig(p, base, defaultBase string, maxTokens int64, hc *http.Client, peer string) (string, int64, error) {
	if maxTokens < 0 {
		return "", 0, configError(p, fmt.Sprintf("MaxTokens is %d; use a positive budget or 0 for the default %d", maxTokens, DefaultMaxTokens))
	}
	if hc == nil {
		return "", 0, configError(p, "HTTPClient is nil; inject the client whose transport reaches "+peer+" (a cassette transport in tests)")
	}
	if base == "" {
		base = defaultBase
	}
	if err := checkBaseURL(base); err != nil {
		return "", 0, configError(p, err.Error())
	}
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	return base, maxTokens, nil
}

func checkBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("BaseURL %q does not parse (%v); use an absolute http(s) URL", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("BaseURL %q is not an absolute http(s) URL", base)
	}
	return nil
}
