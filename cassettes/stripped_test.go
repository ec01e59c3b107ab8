package cassettes_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/openai/openai-go/v3"
	openaiopt "github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"
)

// stripHeaders rewrites the cassette at path as a recorder that deletes
// every header writes it: no request or response header, no Content-Type.
func stripHeaders(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var c cassette.Cassette
	require.NoError(t, yaml.Unmarshal(data, &c))
	for _, in := range c.Interactions {
		in.Request.Headers = nil
		in.Response.Headers = nil
	}
	out, err := yaml.Marshal(&c)
	require.NoError(t, err)
	require.NotContains(t, string(out), "Content-Type")
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// unsetenv clears variables an SDK reads by default for the test's
// duration, so its default options are the documented defaults.
func unsetenv(t *testing.T, names ...string) {
	for _, n := range names {
		t.Setenv(n, "")
		require.NoError(t, os.Unsetenv(n))
	}
}

// TestHeaderStrippedCassettesReplayThroughSDKs replays cassettes whose
// recorder deleted every header through the official Anthropic and OpenAI
// SDKs with their default options: each JSON answer and each stream is
// served with the type its body evidently has, and Open says so once.
func TestHeaderStrippedCassettesReplayThroughSDKs(t *testing.T) {
	unsetenv(t, "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
		"OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_CUSTOM_HEADERS")
	t.Setenv("ANTHROPIC_API_KEY", sdkKey)
	const openaiKey = "sk-proj-recording-key-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", openaiKey)
	ctx := context.Background()

	t.Run("anthropic", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "anthropic.yaml")
		fake := fakellm.New(fakellm.Config{APIKey: sdkKey, ChunkSize: 8})
		rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fake.Transport(), APIKey: sdkKey})
		require.NoError(t, err)
		wantJSON, wantStream, wantEvents := sdkCalls(t, anthropic.NewClient(option.WithHTTPClient(rec.Client())))
		require.NoError(t, rec.Close())
		stripHeaders(t, path)

		c, err := cassettes.Open(path, cassettes.Config{})
		require.NoError(t, err)
		require.Len(t, c.Notes(), 1)
		require.Contains(t, c.Notes()[0], "2 responses recorded without a Content-Type")
		require.Contains(t, c.Notes()[0], "application/json (1), text/event-stream (1)")
		gotJSON, gotStream, gotEvents := sdkCalls(t, anthropic.NewClient(option.WithHTTPClient(c.Client())))
		require.Equal(t, wantJSON, gotJSON)
		require.Equal(t, wantStream, gotStream)
		require.Equal(t, wantEvents, gotEvents)
		require.NoError(t, c.Close())
	})

	t.Run("openai", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "openai.yaml")
		fake := fakellm.New(fakellm.Config{APIKey: openaiKey, ChunkSize: 4})
		calls := func(client openai.Client) (string, string) {
			params := openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("say something")}}
			cc, err := client.Chat.Completions.New(ctx, params)
			require.NoError(t, err)
			s := client.Chat.Completions.NewStreaming(ctx, params)
			defer s.Close()
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				require.True(t, acc.AddChunk(s.Current()))
			}
			require.NoError(t, s.Err())
			return cc.Choices[0].Message.Content, acc.Choices[0].Message.Content
		}
		rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fake.Transport(), APIKey: openaiKey})
		require.NoError(t, err)
		wantJSON, wantStream := calls(openai.NewClient(openaiopt.WithHTTPClient(rec.Client())))
		require.NoError(t, rec.Close())
		stripHeaders(t, path)

		c, err := cassettes.Open(path, cassettes.Config{})
		require.NoError(t, err)
		require.Len(t, c.Notes(), 1)
		require.True(t, strings.HasSuffix(c.Notes()[0], "application/json (1), text/event-stream (1)"), c.Notes()[0])
		gotJSON, gotStream := calls(openai.NewClient(openaiopt.WithHTTPClient(c.Client())))
		require.Equal(t, wantJSON, gotJSON)
		require.Equal(t, wantStream, gotStream)
		require.NoError(t, c.Close())
	})
}
