package sdkgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/harness"
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
			rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: srv.Client().Transport})
			require.NoError(t, err)
			raw, err := ollamaChat(t.Context(), rec.Client(), req)
			require.NoError(t, err)
			require.NoError(t, rec.Close())
			synctest.Test(t, func(t *testing.T) {
				c, err := cassettes.Open(path, cassettes.Config{AllowUnused: tt.miss != ""})
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

// ollamaClientTool is the weather tool (see weatherSchema) as the Ollama
// client declares it: its properties in an ordered map, in name order.
func ollamaClientTool(mapBug bool) api.Tool {
	props, required := weatherSchema(mapBug)
	ordered := api.NewToolPropertiesMap()
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	}) {
		p := props[name].(map[string]any)
		tp := api.ToolProperty{Type: api.PropertyType{p["type"].(string)}}
		if d, ok := p["description"].(string); ok {
			tp.Description = d
		}
		if e, ok := p["enum"].([]string); ok {
			for _, v := range e {
				tp.Enum = append(tp.Enum, v)
			}
		}
		ordered.Set(name, tp)
	}
	return api.Tool{Type: "function", Function: api.ToolFunction{Name: "get_weather", Description: "Weather forecast for a city",
		Parameters: api.ToolFunctionParameters{Type: "object", Required: required, Properties: ordered}}}
}

// ollamaClientAgent is a pipeline on the official Ollama client with its
// defaults (the server at OLLAMA_HOST): a streamed chat (the client's
// default) that calls the weather tool, the tool run locally and its
// result sent back in a chat with Stream false, a streamed and a whole
// generate, the embeddings of the answer and the city, and a chat Ollama
// refuses.
func ollamaClientAgent(mapBug bool) fakeAPIPipeline {
	return func(ctx context.Context, hc *http.Client, run *harness.Run) ([]byte, error) {
		client := ollamaClient(hc)
		var out strings.Builder
		user := api.Message{Role: "user", Content: "Weather in Paris?"}
		tools := api.Tools{ollamaClientTool(mapBug)}
		var called api.Message
		chunks := 0
		err := client.Chat(ctx, &api.ChatRequest{Model: ollamaModel, Messages: []api.Message{user}, Tools: tools}, func(r api.ChatResponse) error {
			chunks++
			called.Role = r.Message.Role
			called.ToolCalls = append(called.ToolCalls, r.Message.ToolCalls...)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(called.ToolCalls) != 1 {
			return nil, fmt.Errorf("want one tool call in %d chunks, got %+v", chunks, called)
		}
		call := called.ToolCalls[0]
		args, err := json.Marshal(call.Function.Arguments)
		if err != nil {
			return nil, err
		}
		result, err := forecast(string(args))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "%s %s(%s) = %s\n", call.ID, call.Function.Name, args, result)
		if err := emit(run, "tool.called", map[string]string{"id": call.ID, "result": result}); err != nil {
			return nil, err
		}

		var answer api.ChatResponse
		err = client.Chat(ctx, &api.ChatRequest{Model: ollamaModel, Stream: new(false), Tools: tools,
			Messages: []api.Message{user, called, {Role: "tool", ToolName: call.Function.Name, Content: result}}},
			func(r api.ChatResponse) error { answer = r; return nil })
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "answer (%d tokens, %s): %s\n", answer.EvalCount, answer.DoneReason, answer.Message.Content)
		if err := emit(run, "answer.received", answer.Message.Content); err != nil {
			return nil, err
		}

		gen := &api.GenerateRequest{Model: ollamaModel, System: "Answer in one line.", Prompt: "Summarise: " + answer.Message.Content}
		var streamed strings.Builder
		pieces := 0
		if err := client.Generate(ctx, gen, func(r api.GenerateResponse) error {
			pieces++
			streamed.WriteString(r.Response)
			return nil
		}); err != nil {
			return nil, err
		}
		gen.Stream = new(false)
		var whole api.GenerateResponse
		if err := client.Generate(ctx, gen, func(r api.GenerateResponse) error { whole = r; return nil }); err != nil {
			return nil, err
		}
		if whole.Response != streamed.String() || pieces < 2 {
			return nil, fmt.Errorf("generate streamed %q in %d pieces, whole %q", streamed.String(), pieces, whole.Response)
		}
		fmt.Fprintf(&out, "generated in %d pieces (%d+%d tokens, %s): %s\n", pieces, whole.PromptEvalCount, whole.EvalCount, whole.DoneReason, whole.Response)
		if err := emit(run, "summary.generated", whole.Response); err != nil {
			return nil, err
		}

		emb, err := client.Embed(ctx, &api.EmbedRequest{Model: "nomic-embed-text", Input: []string{answer.Message.Content, "Paris"}})
		if err != nil {
			return nil, err
		}
		if len(emb.Embeddings) != 2 {
			return nil, fmt.Errorf("want two embeddings, got %d", len(emb.Embeddings))
		}
		fmt.Fprintf(&out, "embedded %d texts in %d dimensions (%d tokens): %.4f\n", len(emb.Embeddings), len(emb.Embeddings[0]), emb.PromptEvalCount, emb.Embeddings[1][:4])
		if err := emit(run, "answer.embedded", emb.Embeddings); err != nil {
			return nil, err
		}

		err = client.Chat(ctx, &api.ChatRequest{Messages: []api.Message{user}}, func(api.ChatResponse) error { return nil })
		var se api.StatusError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("want Ollama's error, got %v", err)
		}
		fmt.Fprintf(&out, "refused: %d %s\n", se.StatusCode, se.ErrorMessage)
		return []byte(out.String()), nil
	}
}

// TestOllamaClientGate records a pipeline on the official Ollama client
// (chat, generate and embed, streamed and not) against the fake at
// OLLAMA_HOST, which the review folds per API, gates its replay (50 runs, 4 in child processes, which
// hold OLLAMA_HOST and OLLAMA_AUTH, which the client reads, as
// configuration), and shows that a tool schema built
// from a map is named as the request field that varies.
func TestOllamaClientGate(t *testing.T) {
	srv := fakeAPIServer(t)
	t.Setenv("OLLAMA_HOST", srv.URL)
	path := filepath.Join(t.TempDir(), "ollama-client.yaml")
	want := fakeAPIRecord(t, path, srv.Client().Transport, ollamaClientAgent(false))
	for _, s := range []string{
		` get_weather({"city":"Weather in Paris?","country":"Weather in Paris?","days":3,"hourly":true,"units":"Weather in Paris?"}) = 3 day(s) of sun over "Weather in Paris?"`,
		`, stop): fakellm: get_weather returned 3 day(s) of sun`,
		"generated in ", ", stop): fakellm echo: Summarise: fakellm: get_weather returned",
		"embedded 2 texts in 64 dimensions (",
		"refused: 400 model is required\n",
	} {
		require.Contains(t, string(want), s)
	}

	requireFolded(t, path, map[string]int{"ollama-chat": 3, "ollama-generate": 2, "ollama-embed": 1}, 1)

	fakeAPIGate(t, "ollama-client", path, ollamaClientAgent(false), want, "OLLAMA_HOST", "OLLAMA_AUTH")
	fakeAPIMapOrder(t, "ollama-client-map-order", path, ollamaClientAgent(true), `["tools"][0]["function"]["parameters"]["required"]`)
}
