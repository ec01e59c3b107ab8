package sdkgate

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/ollama/ollama/api"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/codegenie/codegenie/cassettes"
)

// attemptCounter counts the requests an SDK sends through it.
type attemptCounter struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (a *attemptCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	a.n.Add(1)
	return a.next.RoundTrip(req)
}

// TestMissIsOneAttempt: a request no recorded interaction answers fails
// at once through each official SDK with its default options: the SDK
// sends it once, sleeps no backoff (the bubble's clock does not move)
// and returns an error that is, or wraps, the miss:
//   - aws-sdk-go-v2 retries a transport error unless it answers
//     RetryableError() false, which a miss does;
//   - genai retries nothing unless HTTPOptions.RetryOptions is set;
//   - the Ollama client retries nothing;
//   - openai-go and anthropic-sdk-go retry every transport error up to
//     their default of 2 retries, but no response marked
//     X-Should-Retry: false, which is how the cassette answers their
//     requests' misses (see Misses in package cassettes).
func TestMissIsOneAttempt(t *testing.T) {
	for k, v := range bedrockEnv("1") {
		t.Setenv(k, v)
	}
	// The SDKs' defaults, whatever the machine's environment says.
	for _, k := range []string{"AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE", "AWS_PROFILE", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
		"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", filepath.Join(t.TempDir(), "nowhere"))
	t.Setenv("GEMINI_API_KEY", geminiKey)
	t.Setenv("OPENAI_API_KEY", "test-openai-key")
	t.Setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, []byte("---\nversion: 2\ninteractions: []\n"), 0o644))

	t.Setenv("OLLAMA_HOST", "")
	tests := []struct {
		name string
		call func(ctx context.Context, hc *http.Client) error
	}{
		{"bedrock Converse", func(ctx context.Context, hc *http.Client) error {
			cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
			if err != nil {
				return err
			}
			_, err = bedrockruntime.NewFromConfig(cfg).Converse(ctx, &bedrockruntime.ConverseInput{
				ModelId: aws.String(bedrockModel), Messages: bedrockText("Summarise: lodash 4.17.20.")})
			return err
		}},
		{"bedrock ConverseStream", func(ctx context.Context, hc *http.Client) error {
			cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
			if err != nil {
				return err
			}
			_, err = bedrockruntime.NewFromConfig(cfg).ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
				ModelId: aws.String(bedrockModel), Messages: bedrockText("Summarise: lodash 4.17.20.")})
			return err
		}},
		{"genai GenerateContent", func(ctx context.Context, hc *http.Client) error {
			client, err := genai.NewClient(ctx, &genai.ClientConfig{HTTPClient: hc})
			if err != nil {
				return err
			}
			_, err = client.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hello"), nil)
			return err
		}},
		{"genai GenerateContentStream", func(ctx context.Context, hc *http.Client) error {
			client, err := genai.NewClient(ctx, &genai.ClientConfig{HTTPClient: hc})
			if err != nil {
				return err
			}
			for _, err := range client.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("hello"), nil) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"openai Responses.New", func(ctx context.Context, hc *http.Client) error {
			client := openai.NewClient(option.WithHTTPClient(hc))
			_, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: responsesModel,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")}})
			return err
		}},
		{"anthropic Messages.New", func(ctx context.Context, hc *http.Client) error {
			client := anthropic.NewClient(anthropicoption.WithHTTPClient(hc))
			_, err := client.Messages.New(ctx, anthropic.MessageNewParams{
				Model: "claude-sonnet-4-5", MaxTokens: 16,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}})
			return err
		}},
		{"openai Chat.Completions.NewStreaming", func(ctx context.Context, hc *http.Client) error {
			client := openai.NewClient(option.WithHTTPClient(hc))
			s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4.1",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")}})
			for s.Next() {
			}
			return errors.Join(s.Err(), s.Close())
		}},
		{"anthropic Messages.NewStreaming", func(ctx context.Context, hc *http.Client) error {
			client := anthropic.NewClient(anthropicoption.WithHTTPClient(hc))
			s := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
				Model: "claude-sonnet-4-5", MaxTokens: 16,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}})
			for s.Next() {
			}
			return errors.Join(s.Err(), s.Close())
		}},
		{"ollama Chat", func(ctx context.Context, hc *http.Client) error {
			return ollamaClient(hc).Chat(ctx, &api.ChatRequest{Model: ollamaModel, Messages: []api.Message{{Role: "user", Content: "hello"}}},
				func(api.ChatResponse) error { return nil })
		}},
		{"ollama Generate", func(ctx context.Context, hc *http.Client) error {
			return ollamaClient(hc).Generate(ctx, &api.GenerateRequest{Model: ollamaModel, Prompt: "hello"},
				func(api.GenerateResponse) error { return nil })
		}},
		{"ollama Embed", func(ctx context.Context, hc *http.Client) error {
			_, err := ollamaClient(hc).Embed(ctx, &api.EmbedRequest{Model: ollamaModel, Input: "hello"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, err := cassettes.Open(empty, cassettes.Config{})
				require.NoError(t, err)
				counter := &attemptCounter{next: c.Client().Transport}
				start := time.Now()
				err = tt.call(t.Context(), &http.Client{Transport: counter})
				require.ErrorIs(t, err, cassettes.ErrInteractionNotFound)
				require.ErrorContains(t, err, "the cassette has no interactions", "the error the SDK returns is the miss's")
				require.Equal(t, 1, int(counter.n.Load()), "requests one miss reached the cassette as")
				require.Zero(t, time.Since(start), "the SDK slept before it returned")
				require.NoError(t, c.Close())
			})
		})
	}
}
