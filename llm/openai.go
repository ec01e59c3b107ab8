package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAIConfig configures an OpenAI-compatible chat-completions adapter.
// Nothing is read from the environment.
type OpenAIConfig struct {
	// APIKey is sent as "Authorization: Bearer <key>" when non-empty. Local
	// model servers usually need none.
	APIKey string
	// BaseURL is the server root, e.g. "http://127.0.0.1:8080";
	// "https://api.openai.com" when empty. The adapter posts to
	// {BaseURL}/v1/chat/completions.
	BaseURL string
	// Model is the pinned model name. Required.
	Model string
	// MaxTokens is the completion budget; 0 means DefaultMaxTokens.
	MaxTokens int64
	// Stream selects streamed chat completions (server-sent events).
	Stream bool
	// HTTPClient carries every request. Required.
	HTTPClient *http.Client
}

// OpenAI is an Adapter for OpenAI-compatible chat completions, built on
// the official SDK (github.com/openai/openai-go). It is safe for
// concurrent use.
type OpenAI struct {
	chat     openai.ChatCompletionService
	settings Settings
}

var _ Adapter = (*OpenAI)(nil)

// NewOpenAI validates cfg and returns an adapter with temperature 0 and SDK
// retries off.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	const p = ProviderOpenAI
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, configError(p, "Model is empty; pin the model name the server serves")
	}
	base, maxTokens, err := commonConfig(p, cfg.BaseURL, DefaultOpenAIBaseURL, cfg.MaxTokens, cfg.HTTPClient, "the server")
	if err != nil {
		return nil, err
	}
	// The service is built from explicit options only: openai.NewClient
	// would first read OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID,
	// OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS from the environment.
	opts := []option.RequestOption{
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithBaseURL(strings.TrimSuffix(base, "/") + "/v1/"),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &OpenAI{
		chat: openai.NewChatCompletionService(opts...),
		settings: Settings{
			Provider:    p,
			Model:       cfg.Model,
			Temperature: 0,
			MaxTokens:   maxTokens,
			Stream:      cfg.Stream,
			APIVersion:  OpenAIAPIVersion,
		},
	}, nil
}

// Settings reports the pinned settings.
func (o *OpenAI) Settings() Settings { return o.settings }

// Complete sends req as a system message (when non-empty) and a user message
// and returns the first choice.
func (o *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	if req.Prompt == "" {
		return Response{}, ErrEmptyRequest
	}
	params := openai.ChatCompletionNewParams{
		Model:       openai.ChatModel(o.settings.Model),
		Temperature: openai.Float(o.settings.Temperature),
		MaxTokens:   openai.Int(o.settings.MaxTokens),
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	params.Messages = append(params.Messages, openai.UserMessage(req.Prompt))
	var (
		cc  *openai.ChatCompletion
		err error
	)
	if o.settings.Stream {
		cc, err = o.stream(ctx, params)
	} else if cc, err = o.chat.New(ctx, params); err != nil {
		err = openAIError(err)
	}
	if err != nil {
		return Response{}, err
	}
	r := Response{
		Model:        cc.Model,
		ID:           cc.ID,
		InputTokens:  cc.Usage.PromptTokens,
		OutputTokens: cc.Usage.CompletionTokens,
	}
	if len(cc.Choices) > 0 {
		r.Text = cc.Choices[0].Message.Content
		r.StopReason = cc.Choices[0].FinishReason
	}
	if r.Text == "" {
		return r, fmt.Errorf("llm: openai: completion %q (%d choices): %w", r.ID, len(cc.Choices), ErrEmptyCompletion)
	}
	return r, nil
}

// stream accumulates a streamed completion, asking for the usage chunk.
func (o *OpenAI) stream(ctx context.Context, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := o.chat.NewStreaming(ctx, params)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	finished := false
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return nil, fmt.Errorf("llm: openai: chunk %q does not continue completion %q", chunk.ID, acc.ID)
		}
		for _, c := range chunk.Choices {
			finished = finished || c.FinishReason != ""
		}
	}
	if err := s.Err(); err != nil {
		return nil, openAIError(err)
	}
	if !finished {
		return nil, fmt.Errorf("llm: openai: %w (no chunk carried a finish_reason; the server or cassette cut the stream short)", ErrTruncatedStream)
	}
	return &acc.ChatCompletion, nil
}

// openAIError turns an SDK error into an *APIError when it carries an
// HTTP status, and wraps anything else.
func openAIError(err error) error {
	var ae *openai.Error
	if errors.As(err, &ae) {
		body := ae.RawJSON()
		if _, b, ok := strings.Cut(string(ae.DumpResponse(true)), "\r\n\r\n"); ok && b != "" {
			body = b // the whole body, as the server sent it
		}
		return &APIError{
			Provider: ProviderOpenAI,
			Status:   ae.StatusCode,
			Body:     excerpt(body),
			Err:      err,
		}
	}
	return fmt.Errorf("llm: openai: %w", err)
}
