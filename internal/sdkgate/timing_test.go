package sdkgate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/ollama/ollama/api"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// offsetsHeader is the response header in which a recording keeps when
// each frame of a stream arrived (see Streaming in package cassettes).
const offsetsHeader = "X-Codegenie-Frame-Offsets"

// paced sets the frame offsets of the one stream the cassette at path
// holds to frame i at first + i*step, and returns how many frames it has.
func paced(t *testing.T, path string, first, step time.Duration) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`(` + offsetsHeader + `:\n\s+- )([0-9,]+)`)
	m := re.FindAllSubmatch(raw, -1)
	require.Len(t, m, 1, "one stream, recorded with its offsets")
	n := strings.Count(string(m[0][2]), ",") + 1
	ms := make([]string, n)
	for i := range ms {
		ms[i] = fmt.Sprint((first + time.Duration(i)*step).Milliseconds())
	}
	require.NoError(t, os.WriteFile(path, re.ReplaceAll(raw, []byte("${1}"+strings.Join(ms, ","))), 0o644))
	return n
}

// TestSDKStreamTiming: a stream of each new shape, recorded through its
// official SDK against the fake with one offset per frame, replays
// through the SDK in a synctest bubble at the recorded pace: with the
// offsets set to frame i at 1 s + 10 ms i, the SDK hands over its first
// event at 1 s and finishes at the last frame's offset, in fake time.
func TestSDKStreamTiming(t *testing.T) {
	for k, v := range bedrockEnv("1") {
		t.Setenv(k, v)
	}
	t.Setenv("OPENAI_API_KEY", "test-openai-key")
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:11434")
	t.Setenv("OLLAMA_AUTH", "")
	chatParams := openai.ChatCompletionNewParams{Model: chatToolModel, Tools: []openai.ChatCompletionToolUnionParam{chatWeatherTool(false)},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}
	claudeParams := anthropic.MessageNewParams{Model: bedrockModel, MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Summarise: left-pad 1.3.0 is unpublished."))}}
	tests := []struct {
		name   string
		stream func(ctx context.Context, hc *http.Client, event func()) error
	}{
		{"bedrock InvokeModelWithResponseStream", func(ctx context.Context, hc *http.Client, event func()) error {
			cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
			if err != nil {
				return err
			}
			body, err := bedrockInvokeBody("Summarise: lodash 4.17.20.", []string{"package"})
			if err != nil {
				return err
			}
			st, err := bedrockruntime.NewFromConfig(cfg).InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{
				ModelId: aws.String(bedrockModel), Body: body})
			if err != nil {
				return err
			}
			for range st.GetStream().Events() {
				event()
			}
			return errors.Join(st.GetStream().Err(), st.GetStream().Close())
		}},
		{"anthropic-sdk-go on bedrock", func(ctx context.Context, hc *http.Client, event func()) error {
			cfg, err := config.LoadDefaultConfig(ctx)
			if err != nil {
				return err
			}
			client := anthropic.NewClient(anthropicoption.WithHTTPClient(hc), bedrock.WithConfig(cfg))
			s := client.Messages.NewStreaming(ctx, claudeParams)
			for s.Next() {
				event()
			}
			return errors.Join(s.Err(), s.Close())
		}},
		{"ollama Chat", func(ctx context.Context, hc *http.Client, event func()) error {
			return ollamaClient(hc).Chat(ctx, &api.ChatRequest{Model: ollamaModel, Messages: []api.Message{{Role: "user", Content: "Summarise: lodash 4.17.20."}}},
				func(api.ChatResponse) error { event(); return nil })
		}},
		{"ollama Generate", func(ctx context.Context, hc *http.Client, event func()) error {
			return ollamaClient(hc).Generate(ctx, &api.GenerateRequest{Model: ollamaModel, Prompt: "Summarise: lodash 4.17.20."},
				func(api.GenerateResponse) error { event(); return nil })
		}},
		{"openai chat tool call", func(ctx context.Context, hc *http.Client, event func()) error {
			client := openai.NewClient(option.WithHTTPClient(hc))
			s := client.Chat.Completions.NewStreaming(ctx, chatParams)
			for s.Next() {
				event()
			}
			return errors.Join(s.Err(), s.Close())
		}},
	}
	const first, step = time.Second, 10 * time.Millisecond
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stream.yaml")
			rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{ChunkSize: 8}).Transport()})
			require.NoError(t, err)
			recorded := 0
			require.NoError(t, tt.stream(t.Context(), rec.Client(), func() { recorded++ }))
			require.NoError(t, rec.Close())
			frames := paced(t, path, first, step)
			require.GreaterOrEqual(t, frames, 4, "a stream of several frames")

			synctest.Test(t, func(t *testing.T) {
				c, err := cassettes.Open(path, cassettes.Config{})
				require.NoError(t, err)
				start := time.Now()
				var at []time.Duration
				require.NoError(t, tt.stream(t.Context(), c.Client(), func() { at = append(at, time.Since(start)) }))
				end := time.Since(start)
				require.NoError(t, c.Close())
				require.Len(t, at, recorded, "the replay hands over the events the recording did")
				require.Equal(t, first, at[0], "the first event comes with the first frame")
				require.Equal(t, first+time.Duration(frames-1)*step, end, "the stream ends with its last frame")
				t.Logf("%d frames, %d events: first at %v, end at %v", frames, len(at), at[0], end)
			})
		})
	}
}
