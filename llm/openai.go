package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxOpenAIResponse bounds the response body the OpenAI adapter reads.
const maxOpenAIResponse = 16 << 20

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
	// HTTPClient carries every request. Required.
	HTTPClient *http.Client
}

// OpenAI is an Adapter for OpenAI-compatible chat completions
// (non-streaming). It is safe for concurrent use.
type OpenAI struct {
	endpoint string
	apiKey   string
	client   *http.Client
	settings Settings
}

var _ Adapter = (*OpenAI)(nil)

// NewOpenAI validates cfg and returns an adapter with temperature 0.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	const p = ProviderOpenAI
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, configError(p, "Model is empty; pin the model name the server serves")
	}
	base, maxTokens, err := commonConfig(p, cfg.BaseURL, DefaultOpenAIBaseURL, cfg.MaxTokens, cfg.HTTPClient, "the server")
	if err != nil {
		return nil, err
	}
	return &OpenAI{
		endpoint: strings.TrimSuffix(base, "/") + "/" + OpenAIAPIVersion,
		apiKey:   cfg.APIKey,
		client:   cfg.HTTPClient,
		settings: Settings{
			Provider:    p,
			Model:       cfg.Model,
			Temperature: 0,
			MaxTokens:   maxTokens,
			APIVersion:  OpenAIAPIVersion,
		},
	}, nil
}

// Settings reports the pinned settings.
func (o *OpenAI) Settings() Settings { return o.settings }

// ChatMessage is one message of the chat-completions wire format.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is the request body. Field order is fixed by the struct, so
// the bytes on the wire are stable.
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int64         `json:"max_tokens"`
	Stream      bool          `json:"stream"`
}

type chatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// Complete posts req as a system message (when non-empty) and a user message
// and returns the first choice.
func (o *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	if req.Prompt == "" {
		return Response{}, ErrEmptyRequest
	}
	body := chatRequest{
		Model:       o.settings.Model,
		Temperature: o.settings.Temperature,
		MaxTokens:   o.settings.MaxTokens,
	}
	if req.System != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: req.System})
	}
	body.Messages = append(body.Messages, chatMessage{Role: "user", Content: req.Prompt})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return Response{}, fmt.Errorf("llm: openai: encode request: %w", err)
	}
	payload := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(payload))
	if err != nil {
		return Response{}, fmt.Errorf("llm: openai: build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if o.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	res, err := o.client.Do(hreq)
	if err != nil {
		return Response{}, fmt.Errorf("llm: openai: post %s: %w", o.endpoint, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxOpenAIResponse+1))
	if err != nil {
		return Response{}, fmt.Errorf("llm: openai: read response from %s: %w", o.endpoint, err)
	}
	if res.StatusCode >= 400 {
		return Response{}, &APIError{
			Provider: ProviderOpenAI,
			Status:   res.StatusCode,
			Body:     excerpt(string(raw)),
			Err:      fmt.Errorf("post %s: %s", o.endpoint, res.Status),
		}
	}
	if len(raw) > maxOpenAIResponse {
		return Response{}, fmt.Errorf("llm: openai: response from %s exceeds %d bytes", o.endpoint, maxOpenAIResponse)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return Response{}, fmt.Errorf("llm: openai: decode response from %s: %w (body starts %q)", o.endpoint, err, excerpt(string(raw)))
	}
	r := Response{
		Model:        cr.Model,
		ID:           cr.ID,
		InputTokens:  cr.Usage.PromptTokens,
		OutputTokens: cr.Usage.CompletionTokens,
	}
	if len(cr.Choices) > 0 {
		r.Text = cr.Choices[0].Message.Content
		r.StopReason = cr.Choices[0].FinishReason
	}
	if r.Text == "" {
		return r, fmt.Errorf("llm: openai: completion %q (%d choices): %w", r.ID, len(cr.Choices), ErrEmptyCompletion)
	}
	return r, nil
}
