package sdkgate

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaiopt "github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// chunkRuns is how many runs each SDK's stream is replayed in, each cut
// by its run's chunk plan.
const chunkRuns = 1000

const (
	anthropicKey = "sk-ant-api03-recording-key-0123456789abcdef"
	openaiKey    = "sk-proj-recording-key-0123456789abcdef"
)

// recordSDK records what calls sends through hc, against the fake LLM, into
// a new cassette, and returns its path.
func recordSDK(t *testing.T, key string, calls func(ctx context.Context, hc *http.Client, key string) (string, error)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sdk.yaml")
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{APIKey: key, ChunkSize: 4}).Transport(), APIKey: key})
	require.NoError(t, err)
	_, err = calls(t.Context(), c.Client(), key)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	return path
}

// anthropicCalls makes one JSON and one streamed Messages call through the
// official SDK with its default options and returns what it read.
func anthropicCalls(ctx context.Context, hc *http.Client, key string) (string, error) {
	client := anthropic.NewClient(option.WithHTTPClient(hc), option.WithAPIKey(key), option.WithBaseURL("https://api.anthropic.com/"), option.WithMaxRetries(0))
	params := func(prompt string) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{
			Model: "claude-sonnet-4-5", MaxTokens: 512,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
		}
	}
	msg, err := client.Messages.New(ctx, params("answer in one piece"))
	if err != nil {
		return "", err
	}
	stream := client.Messages.NewStreaming(ctx, params("stream an answer in many small deltas"))
	defer stream.Close()
	var acc anthropic.Message
	events := 0
	for stream.Next() {
		events++
		if err := acc.Accumulate(stream.Current()); err != nil {
			return "", err
		}
	}
	if err := stream.Err(); err != nil {
		return "", err
	}
	if len(msg.Content) == 0 || len(acc.Content) == 0 {
		return "", fmt.Errorf("empty answer: %d and %d content blocks", len(msg.Content), len(acc.Content))
	}
	return fmt.Sprintf("%q\n%q\nstop %s, usage %d+%d, %d events", msg.Content[0].Text, acc.Content[0].Text, acc.StopReason, acc.Usage.InputTokens, acc.Usage.OutputTokens, events), nil
}

// openaiCalls makes one JSON and one streamed chat completion through the
// official SDK with its default options and returns what it read.
func openaiCalls(ctx context.Context, hc *http.Client, key string) (string, error) {
	chat := openai.NewChatCompletionService(openaiopt.WithHTTPClient(hc), openaiopt.WithAPIKey(key), openaiopt.WithBaseURL("https://api.openai.com/v1/"), openaiopt.WithMaxRetries(0))
	params := func(prompt string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{
			Model: "gpt-test", Temperature: openai.Float(0),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage(prompt)},
		}
	}
	cc, err := chat.New(ctx, params("answer in one piece"))
	if err != nil {
		return "", err
	}
	p := params("stream an answer in many small deltas")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := chat.NewStreaming(ctx, p)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		chunks++
		if !acc.AddChunk(stream.Current()) {
			return "", fmt.Errorf("chunk %d does not accumulate", chunks)
		}
	}
	if err := stream.Err(); err != nil {
		return "", err
	}
	if len(cc.Choices) == 0 || len(acc.Choices) == 0 {
		return "", fmt.Errorf("empty answer: %d and %d choices", len(cc.Choices), len(acc.Choices))
	}
	return fmt.Sprintf("%q\n%q\nfinish %s, usage %d, %d chunks", cc.Choices[0].Message.Content, acc.Choices[0].Message.Content, acc.Choices[0].FinishReason, acc.Usage.TotalTokens, chunks), nil
}

// TestSDKStreamsPassUnderChunking: the official Anthropic and OpenAI SDKs
// read their JSON and streamed answers the same way under every chunk plan
// of 1000 runs (each split mid-frame, frames joined, single bytes, mixed or
// as recorded, by run): the gate passes, in the test process alone.
func TestSDKStreamsPassUnderChunking(t *testing.T) {
	for _, sdk := range []struct {
		name, key string
		calls     func(context.Context, *http.Client, string) (string, error)
	}{
		{"anthropic", anthropicKey, anthropicCalls},
		{"openai", openaiKey, openaiCalls},
	} {
		t.Run(sdk.name, func(t *testing.T) {
			path := recordSDK(t, sdk.key, sdk.calls)
			scenario := func(ctx context.Context, run *harness.Run) ([]byte, error) {
				hc, err := run.Client(path)
				if err != nil {
					return nil, err
				}
				out, err := sdk.calls(ctx, hc, "sk-another-key-fedcba9876543210")
				return []byte(out), err
			}
			start := time.Now()
			rep := harness.Config{Iterations: chunkRuns, Processes: -1}.Check(t, sdk.name+"-chunked", scenario)
			require.Equal(t, gate.Pass, rep.Verdict)
			require.Equal(t, chunkRuns, rep.Runs)
			require.Len(t, rep.Chunking, chunkRuns)
			kinds := slices.Compact(slices.Sorted(slices.Values(rep.Chunking)))
			require.Equal(t, []string{"as recorded", "frames joined", "mixed", "single bytes", "split mid-frame"}, kinds)
			t.Logf("%s: %d runs under chunking in %v", sdk.name, rep.Runs, time.Since(start).Round(time.Millisecond))
		})
	}
}
