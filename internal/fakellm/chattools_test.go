package fakellm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChatToolCalls: a chat completion that offers a function tool gets a
// call of the first one (finish_reason tool_calls, content null), whole or
// streamed as a named delta and argument pieces, with the same id; the
// conversation with the tool's result gets "fakellm: <name> returned
// <result>"; tool_choice "none" gets the answer; a tool message answering
// no call is refused.
func TestChatToolCalls(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}}]`
	const user = `{"role":"user","content":"Weather in Oslo?"}`
	var whole struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	res, body := send(t, Config{}, "/v1/chat/completions", `{"model":"gpt-4.1","messages":[`+user+`],`+tools+`}`)
	require.Equal(t, 200, res.StatusCode, body)
	require.NoError(t, json.Unmarshal([]byte(body), &whole))
	c := whole.Choices[0]
	require.Equal(t, "tool_calls", c.FinishReason)
	require.Nil(t, c.Message.Content)
	require.Len(t, c.Message.ToolCalls, 1)
	call := c.Message.ToolCalls[0]
	require.True(t, strings.HasPrefix(call.ID, "call_fake_"), call.ID)
	require.Equal(t, "function", call.Type)
	require.Equal(t, "get_weather", call.Function.Name)
	require.Equal(t, `{"city":"Weather in Oslo?","days":3}`, call.Function.Arguments)

	res, body = send(t, Config{ChunkSize: 5}, "/v1/chat/completions", `{"model":"gpt-4.1","stream":true,"messages":[`+user+`],`+tools+`}`)
	require.Equal(t, 200, res.StatusCode, body)
	var id, name, args, finish string
	for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data := strings.TrimPrefix(frame, "data: ")
		if data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &chunk), data)
		for _, ch := range chunk.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				require.Zero(t, tc.Index)
				id += tc.ID
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
			finish += ch.FinishReason
		}
	}
	require.Equal(t, call.ID, id, "the stream calls the tool the JSON answer calls")
	require.Equal(t, "get_weather", name)
	require.Equal(t, call.Function.Arguments, args)
	require.Equal(t, "tool_calls", finish)

	answered := `{"role":"assistant","content":null,"tool_calls":[{"id":"` + call.ID + `","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"` + call.ID + `","content":"sunny"}`
	_, body = send(t, Config{}, "/v1/chat/completions", `{"model":"gpt-4.1","messages":[`+user+`,`+answered+`],`+tools+`}`)
	require.NoError(t, json.Unmarshal([]byte(body), &whole))
	require.Equal(t, "fakellm: get_weather returned sunny", *whole.Choices[0].Message.Content)
	require.Equal(t, "stop", whole.Choices[0].FinishReason)

	_, body = send(t, Config{}, "/v1/chat/completions", `{"model":"gpt-4.1","tool_choice":"none","messages":[`+user+`],`+tools+`}`)
	require.NoError(t, json.Unmarshal([]byte(body), &whole))
	require.Equal(t, "fakellm echo: Weather in Oslo?", *whole.Choices[0].Message.Content)

	res, body = send(t, Config{}, "/v1/chat/completions", `{"model":"gpt-4.1","messages":[`+user+`,{"role":"tool","tool_call_id":"call_x","content":"sunny"}]}`)
	require.Equal(t, 400, res.StatusCode)
	require.Contains(t, body, "must be a response to a preceeding message with 'tool_calls'")
}
