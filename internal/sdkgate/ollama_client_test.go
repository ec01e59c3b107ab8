package sdkgate

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
)

// ollamaClient is the official Ollama client with its defaults (the
// server at OLLAMA_HOST, as api.ClientFromEnvironment reads it) over hc.
func ollamaClient(hc *http.Client) *api.Client { return api.NewClient(envconfig.Host(), hc) }

// ollamaClientChat asks prompt through the official client without
// streaming and returns the answer's text. The client sends
// "options": null: its ChatRequest.Options has no omitempty.
func ollamaClientChat(ctx context.Context, hc *http.Client, prompt string) (string, error) {
	var text string
	err := ollamaClient(hc).Chat(ctx, &api.ChatRequest{Model: ollamaModel, Stream: new(false),
		Messages: []api.Message{{Role: "user", Content: prompt}}}, func(r api.ChatResponse) error {
		text += r.Message.Content
		return nil
	})
	return text, err
}

// TestOllamaClientReplaysRawRecordings: a chat recorded with a raw HTTP
// client, whose request has no "options", replays through the official
// Ollama client, which sends "options": null; a recording whose options
// held a value misses, since the client's null replaces it, and the miss
// names that member.
func TestOllamaClientReplaysRawRecordings(t *testing.T) {
	srv := fakeAPIServer(t)
	t.Setenv("OLLAMA_HOST", srv.URL)
	tests := []struct {
		name    string
		options map[string]any // what the raw client sent; nil: no "options"
		miss    string         // the miss's diff line; "": served
	}{
		{"no options key", nil, ""},
		{"options with a value", map[string]any{"seed": 42}, `["options"]: {"seed":42} != (missing)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ollama-raw.yaml")
			req := map[string]any{"model": ollamaModel, "stream": false, "messages": []ollamaMessage{{Role: "user", Content: "Summarise: lodash 4.17.20."}}}
			if tt.options != nil {
				req["options"] = tt.options
			}
			rec, err := cassettes.Open(path, cassettes.Options{Mode: cassettes.Record, RealTransport: srv.Client().Transport})
			require.NoError(t, err)
			raw, err := ollamaChat(t.Context(), rec.Client(), req)
			require.NoError(t, err)
			require.NoError(t, rec.Close())
			synctest.Test(t, func(t *testing.T) {
				c, err := cassettes.Open(path, cassettes.Options{AllowUnused: tt.miss != ""})
				require.NoError(t, err)
				got, err := ollamaClientChat(t.Context(), c.Client(), "Summarise: lodash 4.17.20.")
				if tt.miss == "" {
					require.NoError(t, err)
					require.Equal(t, raw.Message.Content, got)
				} else {
					require.ErrorIs(t, err, cassettes.ErrInteractionNotFound)
					require.ErrorContains(t, err, tt.miss)
				}
				require.NoError(t, c.Close())
			})
		})
	}
}
