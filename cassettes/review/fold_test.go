package review

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
)

func sse(frames ...string) string {
	var b strings.Builder
	for _, f := range frames {
		b.WriteString(f + "\n\n")
	}
	return b.String()
}

func recorded(url, contentType, body string) cassettes.Recorded {
	return cassettes.Recorded{Method: "POST", URL: url, Status: 200,
		ResponseHeaders: http.Header{"Content-Type": {contentType}}, ResponseBody: body}
}

const (
	anthropicURL = "https://api.anthropic.com/v1/messages"
	openaiURL    = "https://api.openai.com/v1/chat/completions"
)

func TestFold(t *testing.T) {
	tests := []struct {
		name string
		in   cassettes.Recorded
		want Message
	}{{
		name: "anthropic json with a tool call",
		in: recorded(anthropicURL, "application/json", `{"type":"message","model":"claude-sonnet-4-5-20250929",
			"content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.go","n":1}}],
			"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":5,"cache_creation_input_tokens":7}}`),
		want: Message{API: apiAnthropic, Status: 200, Model: "claude-sonnet-4-5-20250929", Text: "Let me look.",
			ToolCalls:  []ToolCall{{ID: "toolu_1", Name: "read", Arguments: `{"n":1,"path":"a.go"}`}},
			StopReason: "tool_use", Usage: Usage{Input: 10, Output: 20, CacheRead: 5, CacheWrite: 7}},
	}, {
		name: "anthropic stream with text and a tool call",
		in: recorded(anthropicURL, "text/event-stream", sse(
			`event: message_start`+"\n"+`data: {"type":"message_start","message":{"model":"claude-haiku-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1}}}`,
			`event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: ping`+"\n"+`data: {"type":"ping"}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`,
			`event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"grep","input":{}}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\": "}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"x\"}"}}`,
			`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":33}}`,
			`event: message_stop`+"\n"+`data: {"type":"message_stop"}`)),
		want: Message{API: apiAnthropic, Status: 200, Streamed: true, Frames: 10, Model: "claude-haiku-4-5", Text: "Hello",
			ToolCalls:  []ToolCall{{ID: "toolu_2", Name: "grep", Arguments: `{"q":"x"}`}},
			StopReason: "tool_use", Usage: Usage{Input: 12, Output: 33}},
	}, {
		name: "anthropic error event in a stream",
		in: recorded(anthropicURL, "text/event-stream", sse(
			`event: error`+"\n"+`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
		want: Message{API: apiAnthropic, Status: 200, Streamed: true, Frames: 1, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"},
	}, {
		name: "openai json with tool calls and cached tokens",
		in: recorded(openaiURL, "application/json", `{"object":"chat.completion","model":"gpt-4o-mini-2024-07-18",
			"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"b\": 2, \"a\": 1}"}}]},"finish_reason":"tool_calls"}],
			"usage":{"prompt_tokens":100,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":64}}}`),
		want: Message{API: apiOpenAI, Status: 200, Model: "gpt-4o-mini-2024-07-18",
			ToolCalls:  []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1,"b":2}`}},
			StopReason: "tool_calls", Usage: Usage{Input: 36, Output: 9, CacheRead: 64}},
	}, {
		name: "openai stream with text, a tool call and usage",
		in: recorded(openaiURL, "text/event-stream; charset=utf-8", sse(
			`data: {"object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
			`data: {"object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"content":"Hi "}}]}`,
			`data: {"object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"content":"there"}}]}`,
			`data: {"object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","function":{"name":"look","arguments":"{\"k\""}}]}}]}`,
			`data: {"object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":3}"}}]}}]}`,
			`data: {"object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`data: {"object":"chat.completion.chunk","model":"gpt-4.1","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4}}`,
			`data: [DONE]`)),
		want: Message{API: apiOpenAI, Status: 200, Streamed: true, Frames: 8, Model: "gpt-4.1", Text: "Hi there",
			ToolCalls:  []ToolCall{{ID: "call_9", Name: "look", Arguments: `{"k":3}`}},
			StopReason: "stop", Usage: Usage{Input: 7, Output: 4}},
	}, {
		name: "openai error body",
		in: func() cassettes.Recorded {
			r := recorded(openaiURL, "application/json", `{"error":{"message":"Rate limit","type":"","code":"rate_limit_exceeded"}}`)
			r.Status = 429
			return r
		}(),
		want: Message{API: apiOpenAI, Status: 429, ErrorType: "rate_limit_exceeded", ErrorMessage: "Rate limit"},
	}, {
		name: "a body of neither API",
		in:   recorded("https://example.com/v1/thing", "text/plain", "hello"),
		want: Message{Status: 200},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, fold(tt.in))
		})
	}
}

func TestClassify(t *testing.T) {
	base := recorded(anthropicURL, "application/json", `{"type":"message","content":[{"type":"text","text":"a"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	base.RequestBody, base.Key = `{"model":"m","max_tokens":1}`, "k1"
	with := func(f func(r *cassettes.Recorded)) cassettes.Recorded {
		r := base
		r.ResponseHeaders = base.ResponseHeaders.Clone()
		f(&r)
		return r
	}
	tests := []struct {
		name string
		new  cassettes.Recorded
		want Class
		why  []string
	}{
		{"identical", base, Unchanged, nil},
		{"other text", with(func(r *cassettes.Recorded) { r.ResponseBody = strings.Replace(r.ResponseBody, `"a"`, `"b"`, 1) }), Content, nil},
		{"other request value", with(func(r *cassettes.Recorded) { r.RequestBody, r.Key = `{"model":"m","max_tokens":2}`, "k2" }), Content, nil},
		{"a request field added", with(func(r *cassettes.Recorded) { r.RequestBody, r.Key = `{"model":"m","max_tokens":1,"top_k":3}`, "k2" }),
			Schema, []string{`request field added: ["top_k"] (number)`}},
		{"a response field removed", with(func(r *cassettes.Recorded) {
			r.ResponseBody = strings.Replace(r.ResponseBody, `"stop_reason":"end_turn",`, ``, 1)
		}),
			Schema, []string{`response field removed: ["stop_reason"] (string)`}},
		{"a field of another type", with(func(r *cassettes.Recorded) {
			r.ResponseBody = strings.Replace(r.ResponseBody, `"input_tokens":1`, `"input_tokens":"1"`, 1)
		}),
			Schema, []string{`response field type changed: ["usage"]["input_tokens"] (number -> string)`}},
		{"null is not a type change", with(func(r *cassettes.Recorded) { r.ResponseBody = strings.Replace(r.ResponseBody, `"end_turn"`, `null`, 1) }), Content, nil},
		{"a stream instead of JSON", with(func(r *cassettes.Recorded) { r.ResponseHeaders.Set("Content-Type", "text/event-stream") }),
			Schema, nil},
		{"timing only: the duration", with(func(r *cassettes.Recorded) { r.Duration = 3 * time.Second }), timingChange, []string{"duration 0s -> 3s"}},
		{"status", with(func(r *cassettes.Recorded) { r.Status = 500 }), Error, []string{"status 200 -> 500"}},
		{"error type", with(func(r *cassettes.Recorded) {
			r.ResponseBody = `{"type":"error","error":{"type":"overloaded_error","message":"x"}}`
		}), Error, []string{"error type (none) -> overloaded_error"}},
	}
	stream := with(func(r *cassettes.Recorded) {
		r.ResponseHeaders.Set("Content-Type", "text/event-stream")
		r.ResponseBody = sse("data: {}", "data: {}")
		r.ResponseHeaders.Set("X-Codegenie-Frame-Offsets", "0,10")
	})
	stalled := stream
	stalled.ResponseHeaders = stream.ResponseHeaders.Clone()
	stalled.ResponseHeaders.Set("X-Codegenie-Frame-Offsets", "0,4000")
	stalled.Duration = 4 * time.Second
	b, a := fold(stream), fold(stalled)
	got, why := classify(&stream, &stalled, &b, &a, nil)
	require.Equal(t, timingChange, got, "the same stream, its frames later")
	require.Equal(t, []string{"duration 0s -> 4s", "frames arrived: first at 0s -> 0s, last at 10ms -> 4s"}, why)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, n := base, tt.new
			b, a := fold(o), fold(n)
			got, why := classify(&o, &n, &b, &a, nil)
			require.Equal(t, tt.want, got)
			if tt.why != nil {
				require.Equal(t, tt.why, why)
			}
		})
	}
}

func TestPairUp(t *testing.T) {
	rec := func(key, url, body string) cassettes.Recorded {
		return cassettes.Recorded{Key: key, Method: "POST", URL: url, RequestBody: body}
	}
	old := []cassettes.Recorded{
		rec("a", "u", `{"p":"a","n":1}`),
		rec("b", "u", `{"p":"b","n":1}`),
		rec("c", "u", `{"p":"c","n":1}`),
		rec("z", "other", `{}`),
	}
	cur := []cassettes.Recorded{
		rec("c2", "u", `{"p":"c","n":2}`), // nearest: old c (one field differs)
		rec("a", "u", `{"p":"a","n":1}`),  // same key
		rec("d", "u2", `{"p":"d"}`),       // no old of that URL: new
	}
	require.Equal(t, []pair{{2, 0}, {0, 1}, {-1, 2}, {1, -1}, {3, -1}}, pairUp(old, cur))
}
