package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// ErrTruncatedStream reports a server-sent event stream that ended before
// its message_stop event.
var ErrTruncatedStream = errors.New("llm: stream ended before message_stop")

// AnthropicConfig configures an Anthropic adapter. Nothing is read from the
// environment: every value comes from here.
type AnthropicConfig struct {
	// APIKey is sent as "Authorization: Bearer <key>", as
	// anthropic-sdk-go v2 sends it. Required (any non-empty value
	// works against a cassette or a fake server).
	APIKey string
	// BaseURL is the API root, e.g. "https://api.anthropic.com" (the
	// default when empty) or a fake server's URL. The adapter posts to
	// {BaseURL}/v1/messages.
	BaseURL string
	// Model is the pinned model name, e.g. "claude-sonnet-4-5". Required.
	Model string
	// MaxTokens is the completion budget; 0 means DefaultMaxTokens.
	MaxTokens int64
	// Stream selects the streaming Messages API (server-sent events).
	Stream bool
	// HTTPClient carries every request; inject a cassette transport here.
	// Required.
	HTTPClient *http.Client
}

// Anthropic is an Adapter for the Anthropic Messages API built on the
// official SDK. It is safe for concurrent use.
type Anthropic struct {
	client   anthropic.Client
	settings Settings
}

var _ Adapter = (*Anthropic)(nil)

// NewAnthropic validates cfg and returns an adapter with SDK retries off and
// the SDK's environment defaults off. The API version it speaks
// (AnthropicAPIVersion) takes no sampling temperature: the model's own
// sampling applies, pinned by the model name and the API version.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	const p = ProviderAnthropic
	if cfg.APIKey == "" {
		return nil, configError(p, "APIKey is empty; pass the key explicitly (any placeholder works against a cassette)")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, configError(p, "Model is empty; pin a model name such as \"claude-sonnet-4-5\"")
	}
	base, maxTokens, err := commonConfig(p, cfg.BaseURL, DefaultAnthropicBaseURL, cfg.MaxTokens, cfg.HTTPClient, "the API")
	if err != nil {
		return nil, err
	}
	client := anthropic.NewClient(
		// Skip DefaultClientOptions: it reads ANTHROPIC_API_KEY,
		// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, profiles and
		// federation variables from the environment.
		option.WithoutEnvironmentDefaults(),
		// Spans and trace headers would otherwise be decided by
		// ANTHROPIC_OPEN_TELEMETRY* variables at request time.
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
		option.WithAPIKey(cfg.APIKey),
		option.WithBaseURL(base),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
	)
	return &Anthropic{
		client: client,
		settings: Settings{
			Provider:   p,
			Model:      cfg.Model,
			MaxTokens:  maxTokens,
			Stream:     cfg.Stream,
			APIVersion: AnthropicAPIVersion,
		},
	}, nil
}

// Settings reports the pinned settings.
func (a *Anthropic) Settings() Settings { return a.settings }

// Complete sends req as one user message (with req.System as the system
// prompt when non-empty) and returns the concatenated text blocks of the
// answer.
func (a *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	if req.Prompt == "" {
		return Response{}, ErrEmptyRequest
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(a.settings.Model),
		MaxTokens: a.settings.MaxTokens,
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock(req.Prompt)),
		},
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	var (
		msg *anthropic.Message
		err error
	)
	if a.settings.Stream {
		msg, err = a.stream(ctx, params)
	} else {
		msg, err = a.client.Messages.New(ctx, params)
		if err != nil {
			err = anthropicError(err)
		}
	}
	if err != nil {
		return Response{}, err
	}
	return messageResponse(msg)
}

func (a *Anthropic) stream(ctx context.Context, params anthropic.MessageNewParams) (*anthropic.Message, error) {
	s := a.client.Messages.NewStreaming(ctx, params)
	defer s.Close()
	var (
		msg     anthropic.Message
		stopped bool
	)
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("llm: anthropic: accumulate %s event: %w", ev.Type, err)
		}
		if ev.Type == "message_stop" {
			stopped = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, anthropicError(err)
	}
	if !stopped {
		return nil, fmt.Errorf("llm: anthropic: %w (the server or cassette cut the stream short)", ErrTruncatedStream)
	}
	return &msg, nil
}

func messageResponse(msg *anthropic.Message) (Response, error) {
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	r := Response{
		Text:         text.String(),
		Model:        string(msg.Model),
		StopReason:   string(msg.StopReason),
		ID:           msg.ID,
		InputTokens:  msg.Usage.InputTokens,
		OutputTokens: msg.Usage.OutputTokens,
	}
	if r.Text == "" {
		return r, fmt.Errorf("llm: anthropic: message %q (stop reason %q): %w", r.ID, r.StopReason, ErrEmptyCompletion)
	}
	return r, nil
}

// anthropicError turns an SDK error into an *APIError when it carries an
// HTTP status, and wraps anything else.
func anthropicError(err error) error {
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		return &APIError{
			Provider: ProviderAnthropic,
			Status:   ae.StatusCode,
			Body:     excerpt(ae.RawJSON()),
			Err:      err,
		}
	}
	return fmt.Errorf("llm: anthropic: %w", err)
}
