package sdkgate

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
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
// at once through each official SDK with its default options, rather
// than being retried with backoff as a transport error, wherever the SDK
// lets a transport error say it is not worth retrying. attempts is how
// many requests one miss reaches the cassette as:
//   - aws-sdk-go-v2 retries a transport error unless it answers
//     RetryableError() false, which a miss does: 1;
//   - genai retries nothing unless HTTPOptions.RetryOptions is set: 1;
//   - openai-go and anthropic-sdk-go retry every transport error up to
//     their default of 2 retries: 3 (openai-go spares only errors marked
//     by its internal noRetry method, which no other package can
//     implement). Only a response stops them (x-should-retry: false, or a
//     status they do not retry), and a miss is no response.
//
// Every call runs in a synctest bubble, so the SDKs' backoff costs no
// wall time here.
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

	tests := []struct {
		name     string
		attempts int
		call     func(ctx context.Context, hc *http.Client) error
	}{
		{"bedrock Converse", 1, func(ctx context.Context, hc *http.Client) error {
			cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
			if err != nil {
				return err
			}
			_, err = bedrockruntime.NewFromConfig(cfg).Converse(ctx, &bedrockruntime.ConverseInput{
				ModelId: aws.String(bedrockModel), Messages: bedrockText("Summarise: lodash 4.17.20.")})
			return err
		}},
		{"bedrock ConverseStream", 1, func(ctx context.Context, hc *http.Client) error {
			cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
			if err != nil {
				return err
			}
			_, err = bedrockruntime.NewFromConfig(cfg).ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
				ModelId: aws.String(bedrockModel), Messages: bedrockText("Summarise: lodash 4.17.20.")})
			return err
		}},
		{"genai GenerateContent", 1, func(ctx context.Context, hc *http.Client) error {
			client, err := genai.NewClient(ctx, &genai.ClientConfig{HTTPClient: hc})
			if err != nil {
				return err
			}
			_, err = client.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hello"), nil)
			return err
		}},
		{"genai GenerateContentStream", 1, func(ctx context.Context, hc *http.Client) error {
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
		{"openai Responses.New", 3, func(ctx context.Context, hc *http.Client) error {
			client := openai.NewClient(option.WithHTTPClient(hc))
			_, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: responsesModel,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")}})
			return err
		}},
		{"anthropic Messages.New", 3, func(ctx context.Context, hc *http.Client) error {
			client := anthropic.NewClient(anthropicoption.WithHTTPClient(hc))
			_, err := client.Messages.New(ctx, anthropic.MessageNewParams{
				Model: "claude-sonnet-4-5", MaxTokens: 16,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, err := cassettes.Open(empty, cassettes.Options{})
				require.NoError(t, err)
				counter := &attemptCounter{next: c.Client().Transport}
				err = tt.call(t.Context(), &http.Client{Transport: counter})
				require.ErrorIs(t, err, cassettes.ErrInteractionNotFound)
				require.Equal(t, tt.attempts, int(counter.n.Load()), "requests one miss reached the cassette as")
				require.NoError(t, c.Close())
			})
		})
	}
}
