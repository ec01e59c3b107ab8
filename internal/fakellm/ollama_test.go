package fakellm

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOllamaChat(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	t.Run("stream by default", func(t *testing.T) {
		res, body := send(t, Config{ChunkSize: 4}, "/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"hello"}]}`)
		require.Equal(t, 200, res.StatusCode, body)
		require.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
		sc := bufio.NewScanner(strings.NewReader(body))
		var text strings.Builder
		var lines []map[string]any
		for sc.Scan() {
			var l struct {
				Message struct{ Content string } `json:"message"`
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
			var m map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
			lines = append(lines, m)
			text.WriteString(l.Message.Content)
		}
		require.Greater(t, len(lines), 2)
		require.Equal(t, "fakellm echo: hello", text.String())
		for _, l := range lines[:len(lines)-1] {
			require.Equal(t, false, l["done"])
		}
		last := lines[len(lines)-1]
		require.Equal(t, true, last["done"])
		require.Equal(t, "stop", last["done_reason"])
		require.Equal(t, "llama3.2", last["model"])
	})
	t.Run("stream false", func(t *testing.T) {
		res, body := send(t, Config{}, "/api/chat", `{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"hello"}]}`)
		require.Equal(t, 200, res.StatusCode, body)
		require.Equal(t, "application/json; charset=utf-8", res.Header.Get("Content-Type"))
		require.Equal(t, `{"created_at":"1970-01-01T00:00:00Z","done":true,"done_reason":"stop","eval_count":5,"message":{"content":"fakellm echo: hello","role":"assistant"},"model":"llama3.2","prompt_eval_count":2}`, body)
	})
	t.Run("tool call and result", func(t *testing.T) {
		_, body := send(t, Config{}, "/api/chat", `{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"Paris"}],`+tools+`}`)
		var r struct {
			Message struct {
				ToolCalls []struct {
					ID       string
					Function struct {
						Name      string
						Arguments json.RawMessage
					}
				} `json:"tool_calls"`
			}
		}
		require.NoError(t, json.Unmarshal([]byte(body), &r))
		require.Len(t, r.Message.ToolCalls, 1, body)
		require.Equal(t, "get_weather", r.Message.ToolCalls[0].Function.Name)
		require.JSONEq(t, `{"city":"Paris"}`, string(r.Message.ToolCalls[0].Function.Arguments), "arguments are an object, as Ollama sends them")
		_, body = send(t, Config{}, "/api/chat", `{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"Paris"},
			{"role":"tool","tool_name":"get_weather","content":"sunny"}],`+tools+`}`)
		require.Contains(t, body, `"content":"fakellm: get_weather returned sunny"`)
	})
	t.Run("errors", func(t *testing.T) {
		res, body := send(t, Config{}, "/api/chat", `{"messages":[{"role":"user","content":"x"}]}`)
		require.Equal(t, 400, res.StatusCode)
		require.Equal(t, `{"error":"model is required"}`, body)
		res, body = send(t, Config{}, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"x FAKELLM-HTTP-503"}]}`)
		require.Equal(t, 503, res.StatusCode)
		require.Equal(t, `{"error":"fakellm: the prompt asks for status 503"}`, body)
	})
}

func TestOllamaGenerate(t *testing.T) {
	t.Run("stream by default", func(t *testing.T) {
		res, body := send(t, Config{ChunkSize: 4}, "/api/generate", `{"model":"llama3.2","prompt":"hello","system":"be brief"}`)
		require.Equal(t, 200, res.StatusCode, body)
		require.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
		var text strings.Builder
		var last map[string]any
		sc := bufio.NewScanner(strings.NewReader(body))
		for sc.Scan() {
			var l map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
			require.Nil(t, last, "nothing follows the line with done")
			text.WriteString(l["response"].(string))
			if l["done"] == true {
				last = l
			}
		}
		require.Equal(t, "fakellm echo: hello", text.String())
		require.Equal(t, map[string]any{"model": "llama3.2", "created_at": "1970-01-01T00:00:00Z", "response": "", "done": true,
			"done_reason": "stop", "prompt_eval_count": float64(tokens("be brief") + tokens("hello")), "eval_count": float64(tokens("fakellm echo: hello"))}, last)
	})
	t.Run("stream false", func(t *testing.T) {
		res, body := send(t, Config{}, "/api/generate", `{"model":"llama3.2","stream":false,"prompt":"hello"}`)
		require.Equal(t, 200, res.StatusCode, body)
		require.Equal(t, `{"created_at":"1970-01-01T00:00:00Z","done":true,"done_reason":"stop","eval_count":5,"model":"llama3.2","prompt_eval_count":2,"response":"fakellm echo: hello"}`, body)
	})
	t.Run("empty prompt loads the model", func(t *testing.T) {
		_, body := send(t, Config{}, "/api/generate", `{"model":"llama3.2","stream":false}`)
		require.Equal(t, `{"created_at":"1970-01-01T00:00:00Z","done":true,"done_reason":"load","model":"llama3.2","response":""}`, body)
	})
	t.Run("errors", func(t *testing.T) {
		res, body := send(t, Config{}, "/api/generate", `{"prompt":"x"}`)
		require.Equal(t, 400, res.StatusCode)
		require.Equal(t, `{"error":"model is required"}`, body)
		res, _ = send(t, Config{}, "/api/generate", `{"model":"m","prompt":"x FAKELLM-HTTP-500"}`)
		require.Equal(t, 500, res.StatusCode)
	})
}

func TestOllamaEmbed(t *testing.T) {
	var r struct {
		Model           string      `json:"model"`
		Embeddings      [][]float64 `json:"embeddings"`
		PromptEvalCount int64       `json:"prompt_eval_count"`
	}
	res, body := send(t, Config{EmbeddingDims: 8}, "/api/embed", `{"model":"nomic-embed-text","input":["red apple","green pear"]}`)
	require.Equal(t, 200, res.StatusCode, body)
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	require.Equal(t, "nomic-embed-text", r.Model)
	require.Equal(t, [][]float64{Embed("red apple", 8), Embed("green pear", 8)}, r.Embeddings)
	require.Equal(t, tokens("red apple")+tokens("green pear"), r.PromptEvalCount)

	_, body = send(t, Config{}, "/api/embed", `{"model":"m","input":"one","dimensions":3}`)
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	require.Equal(t, [][]float64{Embed("one", 3)}, r.Embeddings)

	_, body = send(t, Config{}, "/api/embed", `{"model":"m"}`)
	require.Equal(t, `{"embeddings":[],"model":"m","prompt_eval_count":0}`, body)
	res, body = send(t, Config{}, "/api/embed", `{"input":"x"}`)
	require.Equal(t, 400, res.StatusCode)
	require.Equal(t, `{"error":"model is required"}`, body)
}
