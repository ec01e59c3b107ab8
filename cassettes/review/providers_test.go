package review_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/cassettes/review"
)

// answer is what a model says, written in each provider's wire format by
// the functions of providers below.
type answer struct {
	text     []string // the chunks of the text, in order
	call     string   // name of the one tool call
	callID   string
	args     []string // the chunks of its JSON arguments
	in, out  int64    // tokens
	cached   int64    // prompt tokens read from a cache
	thoughts int64    // Gemini thinking tokens
}

// wire is a response as the fake API sends it.
type wire struct {
	contentType string
	body        string
}

// provider writes answers as one API does, whole and streamed; noCall
// marks an API without tool calls, whose answers leave the call out.
type provider struct {
	name, url, streamURL, request string
	json, stream                  func(a answer) wire
	noCall                        bool
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func sseEvents(events ...[2]string) string {
	var b strings.Builder
	for _, e := range events {
		if e[0] != "" {
			b.WriteString("event: " + e[0] + "\n")
		}
		b.WriteString("data: " + e[1] + "\n\n")
	}
	return b.String()
}

var providers = []provider{{
	name:      "openai responses",
	url:       "https://api.openai.com/v1/responses",
	streamURL: "https://api.openai.com/v1/responses",
	request:   `{"model":"gpt-4.1","input":"Weather in Paris?","tools":[{"type":"function","name":"get_weather"}]}`,
	json: func(a answer) wire {
		return wire{"application/json", mustJSON(map[string]any{
			"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4.1-2025-04-14", "error": nil, "incomplete_details": nil,
			"output": []any{
				map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
					"content": []any{map[string]any{"type": "output_text", "text": strings.Join(a.text, ""), "annotations": []any{}}}},
				map[string]any{"type": "function_call", "id": "fc_1", "call_id": a.callID, "name": a.call, "arguments": strings.Join(a.args, ""), "status": "completed"},
			},
			"usage": map[string]any{"input_tokens": a.in + a.cached, "input_tokens_details": map[string]any{"cached_tokens": a.cached},
				"output_tokens": a.out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": a.in + a.cached + a.out},
		})}
	},
	stream: func(a answer) wire {
		seq := 0
		ev := func(typ string, fields map[string]any) [2]string {
			fields["type"], fields["sequence_number"] = typ, seq
			seq++
			return [2]string{typ, mustJSON(fields)}
		}
		var evs [][2]string
		evs = append(evs, ev("response.created", map[string]any{"response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-4.1-2025-04-14", "output": []any{}}}))
		evs = append(evs, ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "content": []any{}}}))
		for _, t := range a.text {
			evs = append(evs, ev("response.output_text.delta", map[string]any{"output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": t}))
		}
		evs = append(evs, ev("response.output_item.added", map[string]any{"output_index": 1, "item": map[string]any{"type": "function_call", "id": "fc_1", "call_id": a.callID, "name": a.call, "arguments": ""}}))
		for _, s := range a.args {
			evs = append(evs, ev("response.function_call_arguments.delta", map[string]any{"output_index": 1, "item_id": "fc_1", "delta": s}))
		}
		// The final response as response.completed carries it, without
		// its output: the deltas above are what the text is folded from.
		evs = append(evs, ev("response.completed", map[string]any{"response": map[string]any{"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4.1-2025-04-14",
			"usage": map[string]any{"input_tokens": a.in + a.cached, "input_tokens_details": map[string]any{"cached_tokens": a.cached}, "output_tokens": a.out}}}))
		return wire{"text/event-stream; charset=utf-8", sseEvents(evs...)}
	},
}, {
	name:      "gemini",
	url:       geminiURL,
	streamURL: strings.Replace(geminiURL, ":generateContent", ":streamGenerateContent", 1),
	request:   geminiRequest,
	json:      geminiWhole,
	stream: func(a answer) wire {
		// streamGenerateContent without alt=sse: a JSON array, one
		// element per chunk, as the API sends it.
		return wire{"application/json; charset=UTF-8", "[" + strings.Join(geminiChunks(a), "\r\n,") + "]"}
	},
}, {
	name:      "gemini sse",
	url:       geminiURL,
	streamURL: strings.Replace(geminiURL, ":generateContent", ":streamGenerateContent?alt=sse", 1),
	request:   geminiRequest,
	json:      geminiWhole,
	stream: func(a answer) wire {
		var b strings.Builder
		for _, c := range geminiChunks(a) {
			b.WriteString("data: " + c + "\r\n\r\n")
		}
		return wire{"text/event-stream", b.String()}
	},
}, {
	name:      "bedrock converse",
	url:       "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse",
	streamURL: "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream",
	request:   `{"messages":[{"role":"user","content":[{"text":"Weather in Paris?"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"get_weather"}}]}}`,
	json: func(a answer) wire {
		return wire{"application/json", mustJSON(map[string]any{
			"output": map[string]any{"message": map[string]any{"role": "assistant", "content": []any{
				map[string]any{"text": strings.Join(a.text, "")},
				map[string]any{"toolUse": map[string]any{"toolUseId": a.callID, "name": a.call, "input": json.RawMessage(strings.Join(a.args, ""))}},
			}}},
			"stopReason": "tool_use",
			"usage":      map[string]any{"inputTokens": a.in, "outputTokens": a.out, "totalTokens": a.in + a.out},
			"metrics":    map[string]any{"latencyMs": 812},
		})}
	},
	stream: func(a answer) wire {
		var buf bytes.Buffer
		ev := func(typ string, payload any) { awsEvent(&buf, typ, payload) }
		ev("messageStart", map[string]any{"role": "assistant", "p": "abcd"})
		for _, t := range a.text {
			ev("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"text": t}})
		}
		ev("contentBlockStop", map[string]any{"contentBlockIndex": 0})
		ev("contentBlockStart", map[string]any{"contentBlockIndex": 1, "start": map[string]any{"toolUse": map[string]any{"toolUseId": a.callID, "name": a.call}}})
		for _, s := range a.args {
			ev("contentBlockDelta", map[string]any{"contentBlockIndex": 1, "delta": map[string]any{"toolUse": map[string]any{"input": s}}})
		}
		ev("contentBlockStop", map[string]any{"contentBlockIndex": 1})
		ev("messageStop", map[string]any{"stopReason": "tool_use"})
		ev("metadata", map[string]any{"usage": map[string]any{"inputTokens": a.in, "outputTokens": a.out, "totalTokens": a.in + a.out}, "metrics": map[string]any{"latencyMs": 812}})
		return wire{"application/vnd.amazon.eventstream", buf.String()}
	},
}, {
	// anthropic-sdk-go's bedrock option sends Messages through InvokeModel.
	name:      "bedrock invoke anthropic",
	url:       "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
	streamURL: "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream",
	request:   `{"anthropic_version":"bedrock-2023-05-31","max_tokens":256,"messages":[{"role":"user","content":"Weather in Paris?"}]}`,
	json: func(a answer) wire {
		return wire{"application/json", mustJSON(map[string]any{"id": "msg_bdrk_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
			"content": []any{map[string]any{"type": "text", "text": strings.Join(a.text, "")},
				map[string]any{"type": "tool_use", "id": a.callID, "name": a.call, "input": json.RawMessage(strings.Join(a.args, ""))}},
			"stop_reason": "tool_use", "usage": map[string]any{"input_tokens": a.in, "output_tokens": a.out}})}
	},
	stream: func(a answer) wire {
		var buf bytes.Buffer
		chunk := func(event any) {
			awsEvent(&buf, "chunk", map[string]any{"bytes": []byte(mustJSON(event)), "p": "abcdefgh"})
		}
		chunk(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_bdrk_1", "type": "message", "role": "assistant",
			"model": "claude-sonnet-4-5-20250929", "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": a.in, "output_tokens": 1}}})
		chunk(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, t := range a.text {
			chunk(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": t}})
		}
		chunk(map[string]any{"type": "content_block_stop", "index": 0})
		chunk(map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": a.callID, "name": a.call, "input": map[string]any{}}})
		for _, s := range a.args {
			chunk(map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": s}})
		}
		chunk(map[string]any{"type": "content_block_stop", "index": 1})
		chunk(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "tool_use"}, "usage": map[string]any{"output_tokens": a.out}})
		chunk(map[string]any{"type": "message_stop", "amazon-bedrock-invocationMetrics": map[string]any{"inputTokenCount": a.in, "outputTokenCount": a.out}})
		return wire{"application/vnd.amazon.eventstream", buf.String()}
	},
}, {
	name:      "openai chat",
	url:       "https://api.openai.com/v1/chat/completions",
	streamURL: "https://api.openai.com/v1/chat/completions",
	request:   `{"model":"gpt-4.1","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`,
	json: func(a answer) wire {
		return wire{"application/json", mustJSON(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4.1-2025-04-14",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "content": strings.Join(a.text, ""),
				"tool_calls": []any{map[string]any{"id": a.callID, "type": "function", "function": map[string]any{"name": a.call, "arguments": strings.Join(a.args, "")}}},
			}}},
			"usage": map[string]any{"prompt_tokens": a.in + a.cached, "completion_tokens": a.out, "total_tokens": a.in + a.cached + a.out,
				"prompt_tokens_details": map[string]any{"cached_tokens": a.cached}},
		})}
	},
	stream: func(a answer) wire {
		chunk := func(delta map[string]any, finish any) [2]string {
			return [2]string{"", mustJSON(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4.1-2025-04-14",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})}
		}
		evs := [][2]string{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
		for _, t := range a.text {
			evs = append(evs, chunk(map[string]any{"content": t}, nil))
		}
		evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": a.callID, "type": "function",
			"function": map[string]any{"name": a.call, "arguments": ""}}}}, nil))
		for _, s := range a.args {
			evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": s}}}}, nil))
		}
		evs = append(evs, chunk(map[string]any{}, "tool_calls"))
		evs = append(evs, [2]string{"", mustJSON(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4.1-2025-04-14",
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": a.in + a.cached, "completion_tokens": a.out, "total_tokens": a.in + a.cached + a.out,
				"prompt_tokens_details": map[string]any{"cached_tokens": a.cached}}})})
		evs = append(evs, [2]string{"", "[DONE]"})
		return wire{"text/event-stream", sseEvents(evs...)}
	},
}, {
	name:      "ollama generate",
	url:       "http://localhost:11434/api/generate",
	streamURL: "http://localhost:11434/api/generate",
	request:   `{"model":"llama3.2","prompt":"Weather in Paris?"}`,
	noCall:    true,
	json: func(a answer) wire {
		return wire{"application/json; charset=utf-8", mustJSON(generateLine(a, strings.Join(a.text, ""), true))}
	},
	stream: func(a answer) wire {
		var lines []string
		for _, t := range a.text {
			lines = append(lines, mustJSON(generateLine(a, t, false)))
		}
		lines = append(lines, mustJSON(generateLine(a, "", true)))
		return wire{"application/x-ndjson", strings.Join(lines, "\n") + "\n"}
	},
}, {
	name:      "ollama chat",
	url:       "http://localhost:11434/api/chat",
	streamURL: "http://localhost:11434/api/chat",
	request:   `{"model":"llama3.2","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`,
	json: func(a answer) wire {
		return wire{"application/json; charset=utf-8", mustJSON(ollamaChunk(a, strings.Join(a.text, ""), true, true))}
	},
	stream: func(a answer) wire {
		var lines []string
		for i, t := range a.text {
			lines = append(lines, mustJSON(ollamaChunk(a, t, i == 0, false)))
		}
		lines = append(lines, mustJSON(ollamaChunk(a, "", false, true)))
		return wire{"application/x-ndjson", strings.Join(lines, "\n") + "\n"}
	},
}}

const (
	geminiURL     = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
	geminiRequest = `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}]}`
)

func geminiWhole(a answer) wire {
	return wire{"application/json; charset=UTF-8", mustJSON(geminiChunk(a, a.text, true, true))}
}

// geminiChunks are the chunks of a streamed answer, one per text chunk.
func geminiChunks(a answer) []string {
	var chunks []string
	for i, t := range a.text {
		chunks = append(chunks, mustJSON(geminiChunk(a, []string{t}, false, i == len(a.text)-1)))
	}
	return chunks
}

// awsEvent appends an event-stream event message to buf, encoded by the
// AWS SDK's own encoder.
func awsEvent(buf *bytes.Buffer, typ string, payload any) {
	err := eventstream.NewEncoder().Encode(buf, eventstream.Message{Headers: eventstream.Headers{
		{Name: ":event-type", Value: eventstream.StringValue(typ)},
		{Name: ":content-type", Value: eventstream.StringValue("application/json")},
		{Name: ":message-type", Value: eventstream.StringValue("event")},
	}, Payload: []byte(mustJSON(payload))})
	if err != nil {
		panic(err)
	}
}

// geminiChunk is a GenerateContentResponse with the text parts text, the
// function call when call is set, and the finish reason and usage when
// last is set.
func geminiChunk(a answer, text []string, call, last bool) map[string]any {
	var parts []any
	for _, t := range text {
		parts = append(parts, map[string]any{"text": t})
	}
	if call {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": a.call, "args": json.RawMessage(strings.Join(a.args, ""))}})
	}
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	chunk := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-2.5-flash", "responseId": "r1"}
	if last {
		if !call { // a streamed call comes whole, in the last chunk
			cand["content"].(map[string]any)["parts"] = append(parts, map[string]any{"functionCall": map[string]any{"name": a.call, "args": json.RawMessage(strings.Join(a.args, ""))}})
		}
		cand["finishReason"] = "STOP"
		chunk["usageMetadata"] = map[string]any{"promptTokenCount": a.in + a.cached, "cachedContentTokenCount": a.cached,
			"candidatesTokenCount": a.out - a.thoughts, "thoughtsTokenCount": a.thoughts, "totalTokenCount": a.in + a.cached + a.out}
	}
	return chunk
}

// ollamaChunk is an Ollama ChatResponse with content, the tool call when
// call is set, and the counts when done.
func ollamaChunk(a answer, content string, call, done bool) map[string]any {
	msg := map[string]any{"role": "assistant", "content": content}
	if call {
		msg["tool_calls"] = []any{map[string]any{"function": map[string]any{"name": a.call, "arguments": json.RawMessage(strings.Join(a.args, ""))}}}
	}
	c := map[string]any{"model": "llama3.2", "created_at": "2025-10-01T10:00:00Z", "message": msg, "done": done}
	if done {
		c["done_reason"], c["prompt_eval_count"], c["eval_count"], c["total_duration"] = "stop", a.in, a.out, 123456
	}
	return c
}

// generateLine is an Ollama GenerateResponse with response, and the
// counts when done.
func generateLine(a answer, response string, done bool) map[string]any {
	c := map[string]any{"model": "llama3.2", "created_at": "2025-10-01T10:00:00Z", "response": response, "done": done}
	if done {
		c["done_reason"], c["prompt_eval_count"], c["eval_count"], c["total_duration"] = "stop", a.in, a.out, 123456
	}
	return c
}

// fakeAPI answers every request with w.
type fakeAPI wire

func (f fakeAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {f.contentType}},
		Body:          io.NopCloser(strings.NewReader(f.body)),
		ContentLength: int64(len(f.body)), Request: req}, nil
}

// recordOne records one request of p into a cassette at path, answered
// with w.
func recordOne(t *testing.T, path, url string, p provider, w wire) {
	t.Helper()
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakeAPI(w)})
	require.NoError(t, err)
	resp, err := c.Client().Post(url, "application/json", strings.NewReader(p.request))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, w.body, string(got))
	require.NoError(t, c.Close())
}

// The answers of the re-record: the text changes one word, the tool
// call gains an argument, and the answer grows by 11 tokens.
var (
	before = answer{text: []string{"It is ", "sunny in ", "Paris."}, call: "get_weather", callID: "call_1",
		args: []string{`{"city":`, `"Paris"}`}, in: 100, out: 20, cached: 1000, thoughts: 5}
	after = answer{text: []string{"It is ", "rainy in ", "Paris."}, call: "get_weather", callID: "call_1",
		args: []string{`{"city":`, `"Paris","units":"metric"}`}, in: 100, out: 31, cached: 1000, thoughts: 5}
)

func TestReviewOfEachProvider(t *testing.T) {
	// Costs in micro-dollars at the built-in prices, rounded down.
	costs := map[string][2]int64{
		// gpt-4.1: $2 in, $8 out, $0.50 cache read per million.
		"openai responses": {100*2 + 20*8 + 1000/2, 100*2 + 31*8 + 1000/2},
		// gemini-2.5-flash: $0.30 in, $2.50 out, $0.03 cache read; 20 and
		// 31 output tokens include 5 thinking tokens.
		"gemini":     {(100*300 + 20*2500 + 1000*30) / 1000, (100*300 + 31*2500 + 1000*30) / 1000},
		"gemini sse": {(100*300 + 20*2500 + 1000*30) / 1000, (100*300 + 31*2500 + 1000*30) / 1000},
		// us.anthropic.claude-sonnet-4-5-...: priced as claude-sonnet-4-5,
		// $3 in, $15 out; Converse reports no cache reads here.
		"bedrock converse": {100*3 + 20*15, 100*3 + 31*15},
		// claude-sonnet-4-5-20250929, as the body names it.
		"bedrock invoke anthropic": {100*3 + 20*15, 100*3 + 31*15},
		// gpt-4.1 again, through chat completions.
		"openai chat": {100*2 + 20*8 + 1000/2, 100*2 + 31*8 + 1000/2},
		// Local models: no price, no cost.
		"ollama chat":     {0, 0},
		"ollama generate": {0, 0},
	}
	cacheRead := map[string]int64{"openai responses": 1000, "openai chat": 1000, "gemini": 1000, "gemini sse": 1000}
	// The models the built-in table prices without having confirmed the
	// price against the provider's page.
	unconfirmed := map[string][]string{"openai responses": {"gpt-4.1-2025-04-14"}, "openai chat": {"gpt-4.1-2025-04-14"},
		"gemini": {"gemini-2.5-flash"}, "gemini sse": {"gemini-2.5-flash"}}
	for _, p := range providers {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s streamed=%v", p.name, streamed), func(t *testing.T) {
				form, url := p.json, p.url
				if streamed {
					form, url = p.stream, p.streamURL
				}
				dir := t.TempDir()
				first, err := cassettes.NewStage(dir)
				require.NoError(t, err)
				recordOne(t, filepath.Join(first, "c.yaml"), url, p, form(before))
				err = cassettes.Apply(dir, []cassettes.Update{{File: "c.yaml", Staged: filepath.Join(first, "c.yaml")}}, "first")
				require.NoError(t, err)
				stage, err := cassettes.NewStage(dir)
				require.NoError(t, err)
				recordOne(t, filepath.Join(stage, "c.yaml"), url, p, form(after))

				rev, err := review.Compare(t.Context(), dir, stage)
				require.NoError(t, err)
				var js, md bytes.Buffer
				require.NoError(t, rev.WriteJSON(&js))
				require.NoError(t, rev.Markdown(&md))

				var got struct {
					Cassettes []struct {
						Interactions []struct {
							Drift         string
							Before, After review.Message
							TextDiff      []review.Span `json:"text_diff"`
							Cost          review.Cost
						}
					}
				}
				require.NoError(t, json.Unmarshal(js.Bytes(), &got), js.String())
				require.Len(t, got.Cassettes, 1)
				require.Len(t, got.Cassettes[0].Interactions, 1)
				in := got.Cassettes[0].Interactions[0]
				require.Equal(t, "content", in.Drift)
				for _, m := range []review.Message{in.Before, in.After} {
					require.Equal(t, streamed, m.Streamed)
					require.NotEmpty(t, m.API)
					require.NotEmpty(t, m.Model)
					require.NotEmpty(t, m.StopReason)
					require.Empty(t, m.ErrorType)
				}
				require.Equal(t, "It is sunny in Paris.", in.Before.Text)
				require.Equal(t, "It is rainy in Paris.", in.After.Text)
				require.Equal(t, []review.Span{{Op: "=", Text: "It is "}, {Op: "-", Text: "sunny"}, {Op: "+", Text: "rainy"}, {Op: "=", Text: " in Paris."}}, in.TextDiff)
				if !p.noCall {
					require.Equal(t, []review.ToolCall{{ID: in.Before.ToolCalls[0].ID, Name: "get_weather", Arguments: `{"city":"Paris"}`}}, in.Before.ToolCalls)
					require.Equal(t, []review.ToolCall{{ID: in.After.ToolCalls[0].ID, Name: "get_weather", Arguments: `{"city":"Paris","units":"metric"}`}}, in.After.ToolCalls)
				}
				require.Equal(t, review.Usage{Input: 100, Output: 20, CacheRead: cacheRead[p.name]}, in.Before.Usage)
				require.Equal(t, review.Usage{Input: 100, Output: 31, CacheRead: cacheRead[p.name]}, in.After.Usage)
				want := costs[p.name]
				require.Equal(t, review.Cost{Before: want[0], After: want[1], Delta: want[1] - want[0], Unconfirmed: unconfirmed[p.name]}, in.Cost)

				// The Markdown shows the same: the word diff, the tool
				// calls before and after, tokens and cost.
				text := md.String()
				require.Contains(t, text, "It is [-sunny-]{+rainy+} in Paris.")
				if !p.noCall {
					require.Contains(t, text, "- get_weather({\"city\":\"Paris\"})\n+ get_weather({\"city\":\"Paris\",\"units\":\"metric\"})")
				}
				require.Contains(t, text, "tokens in 100, out 20 → 31 (+11)")
				switch {
				case unconfirmed[p.name] != nil:
					require.Contains(t, text, fmt.Sprintf("cost %s → %s (+%s, at an unconfirmed price)", money(want[0]), money(want[1]), money(want[1]-want[0])))
					require.Contains(t, text, "Unconfirmed price for `"+unconfirmed[p.name][0]+"`: not checked against the provider's published pricing page")
				case want[0] != want[1]:
					require.Contains(t, text, fmt.Sprintf("cost %s → %s (+%s)", money(want[0]), money(want[1]), money(want[1]-want[0])))
					require.NotContains(t, text, "unconfirmed")
				default:
					require.Contains(t, text, "cost 0.000000 (unchanged)")
					require.NotContains(t, text, "No price for")
				}
			})
		}
	}
}

func money(micro int64) string { return fmt.Sprintf("%d.%06d", micro/1_000_000, micro%1_000_000) }
