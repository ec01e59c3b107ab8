package sdkgate

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/codegenie/codegenie/harness"
)

// chatToolModel is the model the chat tool-calling pipeline asks.
const chatToolModel = "gpt-4.1"

// chatWeatherTool is the weather tool (see weatherSchema) as a chat
// completions function tool.
func chatWeatherTool(mapBug bool) openai.ChatCompletionToolUnionParam {
	props, required := weatherSchema(mapBug)
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Weather forecast for a city"),
		Parameters:  shared.FunctionParameters{"type": "object", "properties": props, "required": required},
	})
}

// chatToolAgent is a pipeline on openai-go's chat completions with the
// SDK's default options (key and base URL from the environment): a
// plain and a streamed turn that call the weather tool (the stream read
// with the SDK's accumulator), the tools run locally, their results sent
// back as tool messages for a streamed answer, and a tool message the API
// refuses because it answers no call.
func chatToolAgent(mapBug bool) fakeAPIPipeline {
	return func(ctx context.Context, hc *http.Client, run *harness.Run) ([]byte, error) {
		client := openai.NewClient(option.WithHTTPClient(hc))
		tools := []openai.ChatCompletionToolUnionParam{chatWeatherTool(mapBug)}
		var out strings.Builder
		messages := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}

		plain, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: chatToolModel, Messages: messages, Tools: tools})
		if err != nil {
			return nil, err
		}
		s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: chatToolModel, Messages: messages, Tools: tools})
		var acc openai.ChatCompletionAccumulator
		finished := 0
		for s.Next() {
			acc.AddChunk(s.Current())
			if _, ok := acc.JustFinishedToolCall(); ok {
				finished++
			}
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
		s.Close()
		for i, c := range []openai.ChatCompletion{*plain, acc.ChatCompletion} {
			if len(c.Choices) != 1 || len(c.Choices[0].Message.ToolCalls) != 1 || c.Choices[0].FinishReason != "tool_calls" {
				return nil, fmt.Errorf("completion %d: want one tool call, got %+v", i, c.Choices)
			}
		}
		if finished != 1 {
			return nil, fmt.Errorf("the accumulator finished %d tool calls", finished)
		}
		call := plain.Choices[0].Message.ToolCalls[0]
		if got := acc.Choices[0].Message.ToolCalls[0]; got.ID != call.ID || got.Function.Arguments != call.Function.Arguments {
			return nil, fmt.Errorf("streamed call %+v, plain %+v", got, call)
		}
		result, err := forecast(call.Function.Arguments)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "%s %s(%s) = %s\n", call.ID, call.Function.Name, call.Function.Arguments, result)
		if err := emit(run, "tool.called", map[string]string{"id": call.ID, "result": result}); err != nil {
			return nil, err
		}

		messages = append(messages, plain.Choices[0].Message.ToParam(), openai.ToolMessage(result, call.ID))
		s = client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: chatToolModel, Messages: messages, Tools: tools,
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
		acc = openai.ChatCompletionAccumulator{}
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
		s.Close()
		if len(acc.Choices) != 1 {
			return nil, fmt.Errorf("want one answer, got %+v", acc.Choices)
		}
		answer := acc.Choices[0].Message.Content
		fmt.Fprintf(&out, "answer %s (%d tokens, %s): %s\n", acc.ID, acc.Usage.TotalTokens, acc.Choices[0].FinishReason, answer)
		if err := emit(run, "answer.received", answer); err != nil {
			return nil, err
		}

		_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: chatToolModel, Tools: tools,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?"), openai.ToolMessage(result, "call_unknown")}})
		line, err := apiErrorLine(err)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "%s\n", line)
		return []byte(out.String()), nil
	}
}

// TestChatToolCalls records a tool-calling pipeline on openai-go's chat
// completions against the fake's OpenAI-compatible chat path, which the
// review folds (the plain and the streamed call alike), gates its
// replay (50 runs, 4 in child processes) and shows that a tool schema
// built from a map is named as the request field that varies.
func TestChatToolCalls(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "test-openai-key")
	path, want := fakeAPIRecordRedirected(t, "https://api.openai.com", "chat-tools.yaml", chatToolAgent(false),
		"call_fake_", ` get_weather({"city":"Weather in Paris?","country":"Weather in Paris?","days":3,"hourly":true,"units":"Weather in Paris?"}) = 3 day(s) of sun over "Weather in Paris?"`,
		"answer chatcmpl-fake-", `, stop): fakellm: get_weather returned 3 day(s) of sun over "Weather in Paris?"`,
		"error 400 invalid_request_error  \n")

	requireFolded(t, path, map[string]int{"openai-chat": 4}, 2)

	fakeAPIGate(t, "chat-tools", path, chatToolAgent(false), want, "OPENAI_API_KEY", "OPENAI_BASE_URL")
	fakeAPIMapOrder(t, "chat-tools-map-order", path, chatToolAgent(true), `["tools"][0]["function"]["parameters"]["required"]`)
}
