package sdkgate

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// anthropicV2Version is the anthropic-version anthropic-sdk-go v2 sends;
// v1 sent 2023-06-01, and its Beta.Messages called /v1/messages?beta=true.
const anthropicV2Version = "2026-10-21"

// reviewCalls asks two questions through anthropic-sdk-go v2, the
// second streamed.
func reviewCalls(ctx context.Context, hc *http.Client, opts ...option.RequestOption) ([]byte, error) {
	client := anthropic.NewClient(append([]option.RequestOption{option.WithHTTPClient(hc)}, opts...)...)
	params := func(q string) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 256,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(q))}}
	}
	msg, err := client.Messages.New(ctx, params("review the style of: x := 1"))
	if err != nil {
		return nil, err
	}
	s := client.Messages.NewStreaming(ctx, params("review the tests of: x := 1"))
	defer s.Close()
	var acc anthropic.Message
	for s.Next() {
		if err := acc.Accumulate(s.Current()); err != nil {
			return nil, err
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return []byte(msg.Content[0].Text + "\n" + acc.Content[0].Text), nil
}

// TestAnthropicVersionChange: a cassette recorded in the shape of
// anthropic-sdk-go v1 (anthropic-version 2023-06-01, Beta.Messages at
// /v1/messages?beta=true) replayed through v2 misses every request for
// that alone. The error the SDK returns names the version change once,
// and a gate on it says it once, BROKEN, with the one command that
// records the cassette again.
func TestAnthropicVersionChange(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	path := filepath.Join(t.TempDir(), "review.yaml")
	fakeAPIRecord(t, path, fakellm.New(fakellm.Config{ChunkSize: 7}).Transport(), func(ctx context.Context, hc *http.Client, _ *harness.Run) ([]byte, error) {
		return reviewCalls(ctx, hc)
	})
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(b), anthropicV2Version), "the recording keeps the version each request sent")
	v1 := strings.ReplaceAll(string(b), anthropicV2Version, "2023-06-01")
	v1 = strings.ReplaceAll(v1, "url: https://api.anthropic.com/v1/messages\n", "url: https://api.anthropic.com/v1/messages?beta=true\n")
	require.NoError(t, os.WriteFile(path, []byte(v1), 0o644))

	// Through the SDK at its default options (its retries cost no wall
	// time in a bubble).
	synctest.Test(t, func(t *testing.T) {
		c, err := cassettes.Open(path, cassettes.Config{AllowUnused: true, Hint: "rerecord-review"})
		require.NoError(t, err)
		_, err = reviewCalls(t.Context(), c.Client())
		var me *cassettes.MissError
		require.True(t, errors.As(err, &me), "the SDK's error names the miss: %v", err)
		require.True(t, me.APIVersion, "%v", err)
		msg := err.Error()
		require.Equal(t, 1, strings.Count(msg, anthropicV2Version), "one message names the version change: %s", msg)
		require.Contains(t, msg, `header Anthropic-Version "2023-06-01" != "`+anthropicV2Version+`"`)
		require.Contains(t, msg, "rerecord-review")
		require.NoError(t, c.Close())
	})

	// Gated, the report says it once, with one command. (No retries: a
	// gate outside a bubble would wait out the SDK's backoff for real.)
	cfg := harness.Config{Iterations: 20, Floor: 20, Processes: -1, ArtifactDir: t.TempDir(), ReproCommand: "go test ./review -run '^TestReview$' -count=1"}
	rep, err := cfg.Iterate(t.Context(), "review", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		hc, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		return reviewCalls(ctx, hc, option.WithMaxRetries(0))
	})
	require.ErrorIs(t, err, harness.ErrBroken, "%s", rep)
	require.Len(t, rep.Classes, 1, "%s", rep)
	text := rep.String()
	require.Equal(t, 1, strings.Count(text, `header Anthropic-Version "2023-06-01" != "`+anthropicV2Version+`"`), "%s", text)
	require.Equal(t, 1, strings.Count(text, "-cassettes.record="), "%s", text)
	require.Contains(t, text, "next: the SDK's API version changed since the cassette was recorded")
}
