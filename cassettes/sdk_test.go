package cassettes_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/openai/openai-go/v3"
	openaiopt "github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"
)

const sdkKey = "sk-ant-api03-recording-key-0123456789abcdef"

func sdkClient(hc *http.Client, key string, extra ...option.RequestOption) anthropic.Client {
	opts := append([]option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithAPIKey(key),
		option.WithBaseURL("https://api.anthropic.com/"),
		option.WithMaxRetries(0),
	}, extra...)
	return anthropic.NewClient(opts...)
}

func sdkParams(prompt string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 512,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
	}
}

// sdkCalls makes one JSON and one streaming call and returns both texts
// and the number of stream events received.
func sdkCalls(t testing.TB, client anthropic.Client) (jsonText, streamText string, events int) {
	t.Helper()
	ctx := context.Background()
	msg, err := client.Messages.New(ctx, sdkParams("say something deterministic"))
	require.NoError(t, err)
	require.NotEmpty(t, msg.Content)
	jsonText = msg.Content[0].Text

	stream := client.Messages.NewStreaming(ctx, sdkParams("stream something deterministic"))
	defer stream.Close()
	var acc anthropic.Message
	for stream.Next() {
		events++
		require.NoError(t, acc.Accumulate(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.NotEmpty(t, acc.Content)
	return jsonText, acc.Content[0].Text, events
}

func TestSDKRecordAndReplay(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sdk.yaml")
	fake := fakellm.New(fakellm.Config{APIKey: sdkKey, ChunkSize: 8})

	rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fake.Transport(), APIKey: sdkKey})
	require.NoError(t, err)
	wantJSON, wantStream, wantEvents := sdkCalls(t, sdkClient(rec.Client(), sdkKey))
	require.NoError(t, rec.Close())
	require.Greater(t, wantEvents, 5)

	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(saved), sdkKey)
	require.Contains(t, string(saved), "event: content_block_delta")

	// Replay inside a synctest bubble (no sockets), as another machine with
	// another SDK version, OS, architecture and Go version would send it.
	synctest.Test(t, func(t *testing.T) {
		c, err := cassettes.Open(path, cassettes.Config{})
		require.NoError(t, err)
		client := sdkClient(c.Client(), "sk-ant-api03-some-other-key-fedcba9876543210",
			option.WithHeader("User-Agent", "Anthropic/Go 9.9.9"),
			option.WithHeader("X-Stainless-Os", "Plan9"),
			option.WithHeader("X-Stainless-Arch", "riscv64"),
			option.WithHeader("X-Stainless-Runtime-Version", "go1.99"),
			option.WithHeader("X-Stainless-Package-Version", "9.9.9"),
			option.WithHeader("X-Stainless-Timeout", "17"),
			option.WithHeader("X-Stainless-Retry-Count", "3"),
		)
		gotJSON, gotStream, gotEvents := sdkCalls(t, client)
		require.Equal(t, wantJSON, gotJSON)
		require.Equal(t, wantStream, gotStream)
		require.Equal(t, wantEvents, gotEvents)
		require.NoError(t, c.Close())
	})
}

func TestSDKMissIsTyped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sdk.yaml")
	fake := fakellm.New(fakellm.Config{})
	rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fake.Transport(), APIKey: sdkKey})
	require.NoError(t, err)
	client := sdkClient(rec.Client(), sdkKey)
	_, err = client.Messages.New(context.Background(), sdkParams("one"))
	require.NoError(t, err)
	require.NoError(t, rec.Close())

	c, err := cassettes.Open(path, cassettes.Config{AllowUnused: true})
	require.NoError(t, err)
	client = sdkClient(c.Client(), sdkKey)
	_, err = client.Messages.New(context.Background(), sdkParams("two"))
	require.ErrorIs(t, err, cassettes.ErrInteractionNotFound)
	require.True(t, strings.Contains(err.Error(), `"one" != "two"`), err.Error())
	require.NotContains(t, err.Error(), sdkKey)
}

// TestOpenAISDKRecordAndReplay records chat completions, streaming and
// not, through the official OpenAI SDK against the fake, and replays them
// inside a synctest bubble with another key and SDK headers.
func TestOpenAISDKRecordAndReplay(t *testing.T) {
	const key = "sk-proj-recording-key-0123456789abcdef"
	path := filepath.Join(t.TempDir(), "openai.yaml")
	fake := fakellm.New(fakellm.Config{APIKey: key, ChunkSize: 4})
	client := func(hc *http.Client, key string, extra ...openaiopt.RequestOption) openai.ChatCompletionService {
		return openai.NewChatCompletionService(append([]openaiopt.RequestOption{
			openaiopt.WithHTTPClient(hc), openaiopt.WithAPIKey(key),
			openaiopt.WithBaseURL("https://api.openai.com/v1/"), openaiopt.WithMaxRetries(0),
		}, extra...)...)
	}
	params := func(prompt string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{
			Model:       "gpt-test",
			Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage(prompt)},
			Temperature: openai.Float(0),
		}
	}
	calls := func(t *testing.T, chat openai.ChatCompletionService) (string, string, int) {
		ctx := context.Background()
		cc, err := chat.New(ctx, params("say something"))
		require.NoError(t, err)
		p := params("stream something")
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := chat.NewStreaming(ctx, p)
		defer s.Close()
		var acc openai.ChatCompletionAccumulator
		n := 0
		for s.Next() {
			n++
			require.True(t, acc.AddChunk(s.Current()))
		}
		require.NoError(t, s.Err())
		require.Positive(t, acc.Usage.TotalTokens)
		return cc.Choices[0].Message.Content, acc.Choices[0].Message.Content, n
	}

	rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fake.Transport(), APIKey: key})
	require.NoError(t, err)
	wantJSON, wantStream, wantChunks := calls(t, client(rec.Client(), key))
	require.NoError(t, rec.Close())
	require.Greater(t, wantChunks, 5)
	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(saved), key)
	require.Contains(t, string(saved), "chat.completion.chunk")

	synctest.Test(t, func(t *testing.T) {
		c, err := cassettes.Open(path, cassettes.Config{})
		require.NoError(t, err)
		gotJSON, gotStream, gotChunks := calls(t, client(c.Client(), "sk-proj-another-key-fedcba9876543210",
			openaiopt.WithHeader("User-Agent", "OpenAI/Go 9.9.9"),
			openaiopt.WithHeader("X-Stainless-Os", "Plan9")))
		require.Equal(t, wantJSON, gotJSON)
		require.Equal(t, wantStream, gotStream)
		require.Equal(t, wantChunks, gotChunks)
		require.NoError(t, c.Close())
	})
}
