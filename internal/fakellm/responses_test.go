package fakellm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// send posts body to path on a new server for cfg and returns the
// response and its body.
func send(t *testing.T, cfg Config, path, body string) (*http.Response, string) {
	t.Helper()
	res := post(t, New(cfg), path, body, nil)
	return res, readAll(t, res.Body)
}

const responsesTools = `"tools":[{"type":"function","name":"get_weather","strict":true,"parameters":{"type":"object",
	"properties":{"city":{"type":"string"},"days":{"type":"integer"},"hourly":{"type":"boolean"},"x":{"type":"object"}},"required":["city"]}}]`

// sseEvents splits a text/event-stream into (event name, data) pairs.
func sseEvents(t *testing.T, body string) [][2]string {
	t.Helper()
	var out [][2]string
	for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(frame, "\ndata: ")
		require.True(t, ok, "frame %q", frame)
		require.True(t, strings.HasPrefix(name, "event: "), "frame %q", frame)
		out = append(out, [2]string{strings.TrimPrefix(name, "event: "), data})
	}
	return out
}

func TestResponsesToolCall(t *testing.T) {
	res, body := send(t, Config{}, "/v1/responses", `{"model":"m","input":"Weather in Paris?",`+responsesTools+`}`)
	require.Equal(t, 200, res.StatusCode, body)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	var r struct {
		ID     string `json:"id"`
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type, Name, CallID, Arguments, Status string
		} `json:"output"`
		Usage struct{ InputTokens, OutputTokens, TotalTokens int64 } `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	require.Equal(t, "response", r.Object)
	require.Equal(t, "completed", r.Status)
	require.Len(t, r.Output, 1)
	require.Equal(t, "function_call", r.Output[0].Type)
	require.Equal(t, "get_weather", r.Output[0].Name)
	require.Equal(t, `{"city":"Weather in Paris?","days":3,"hourly":true,"x":null}`, r.Output[0].Arguments)
	require.True(t, strings.HasPrefix(r.ID, "resp_fake_"))
	_, again := send(t, Config{}, "/v1/responses", `{"model":"m","input":"Weather in Paris?",`+responsesTools+`}`)
	require.Equal(t, body, again, "the answer depends only on the request")
}

func TestResponsesStream(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        string // the text or the arguments the deltas spell
		deltas      string
	}{
		{"text", `"input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]`, "fakellm echo: hi", "response.output_text.delta"},
		{"tool call", `"input":"Weather in Oslo?",` + responsesTools, `{"city":"Weather in Oslo?","days":3,"hourly":true,"x":null}`, "response.function_call_arguments.delta"},
		{"tool result", `"input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"sunny"}],` + responsesTools, "fakellm: get_weather returned sunny", "response.output_text.delta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := send(t, Config{ChunkSize: 5}, "/v1/responses", `{"model":"m","stream":true,`+tc.input+`}`)
			require.Equal(t, 200, res.StatusCode, body)
			require.Equal(t, "text/event-stream; charset=utf-8", res.Header.Get("Content-Type"))
			require.NotContains(t, body, "[DONE]")
			evs := sseEvents(t, body)
			var spelled strings.Builder
			for i, ev := range evs {
				var d struct {
					Type           string `json:"type"`
					SequenceNumber *int   `json:"sequence_number"`
					Delta          string `json:"delta"`
				}
				require.NoError(t, json.Unmarshal([]byte(ev[1]), &d))
				require.Equal(t, ev[0], d.Type, "the event line names the data's type")
				require.NotNil(t, d.SequenceNumber)
				require.Equal(t, i, *d.SequenceNumber)
				if d.Type == tc.deltas {
					spelled.WriteString(d.Delta)
				}
			}
			require.Equal(t, tc.want, spelled.String())
			require.Equal(t, "response.created", evs[0][0])
			require.Equal(t, "response.completed", evs[len(evs)-1][0])
			var done struct {
				Response struct{ Status string } `json:"response"`
			}
			require.NoError(t, json.Unmarshal([]byte(evs[len(evs)-1][1]), &done))
			require.Equal(t, "completed", done.Response.Status)
		})
	}
}

func TestResponsesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"max_output_tokens", `{"model":"m","input":"x","max_output_tokens":8}`, 400,
			`{"error":{"code":"integer_below_min_value","message":"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 8 instead.","param":"max_output_tokens","type":"invalid_request_error"}}`},
		{"no model", `{"input":"x"}`, 400,
			`{"error":{"code":"missing_required_parameter","message":"Missing required parameter: 'model'.","param":"model","type":"invalid_request_error"}}`},
		{"marker", `{"model":"m","input":"x FAKELLM-HTTP-429","stream":true}`, 429,
			`{"error":{"code":"rate_limit_exceeded","message":"fakellm: the prompt asks for status 429","param":null,"type":"rate_limit_exceeded"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := send(t, Config{}, "/v1/responses", tc.body)
			require.Equal(t, tc.status, res.StatusCode)
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			require.Equal(t, tc.want, body)
		})
	}
}
