package fakellm

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/llm"
	"github.com/codegenie/codegenie/prompt"
)

// TestThroughAdapters sends a real prompt through the official SDK (JSON
// and SSE) and the OpenAI adapter, inside a synctest bubble, and checks
// that each answer's diff applies.
func TestThroughAdapters(t *testing.T) {
	files := map[string]string{"go.mod": goMod, "main.go": "package main\n"}
	p := buildPrompt(t, prompt.Advisory{ID: "GO-2024-1", Summary: "s", Ecosystem: "Go", Package: "golang.org/x/net", FixedVersion: "0.23.0"}, files)
	synctest.Test(t, func(t *testing.T) {
		c := &http.Client{Transport: New(Config{ChunkSize: 5}).Transport()}
		var adapters []llm.Adapter
		for _, stream := range []bool{false, true} {
			a, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "claude-x", Stream: stream, HTTPClient: c})
			require.NoError(t, err)
			adapters = append(adapters, a)
		}
		o, err := llm.NewOpenAI(llm.OpenAIConfig{Model: "local", HTTPClient: c})
		require.NoError(t, err)
		adapters = append(adapters, o)
		var texts []string
		for _, a := range adapters {
			res, err := a.Complete(context.Background(), llm.Request{System: p.System, Prompt: p.User})
			require.NoError(t, err)
			diff, err := prompt.ParseAnswer(res.Text)
			require.NoError(t, err, res.Text)
			got, err := applyDiff(t, diff, files)
			require.NoError(t, err)
			require.Contains(t, got["go.mod"], "golang.org/x/net v0.23.0 // indirect")
			texts = append(texts, res.Text)
		}
		require.Equal(t, texts[0], texts[1])
		require.Equal(t, texts[0], texts[2])
	})
}
