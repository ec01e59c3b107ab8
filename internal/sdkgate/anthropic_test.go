package sdkgate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/codegenie/codegenie/harness"
)

// anthropicTool is the weather tool in the Messages API's shape (see
// weatherSchema).
func anthropicTool(mapBug bool) anthropic.ToolUnionParam {
	props, required := weatherSchema(mapBug)
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
		Name: "get_weather", Description: anthropic.String("Weather forecast for a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: props, Required: required},
	}}
}

// anthropicAgent is a pipeline on anthropic-sdk-go v2 with its default
// options (the key from ANTHROPIC_API_KEY): a message, the same question
// streamed, and a request the API refuses.
func anthropicAgent(mapBug bool) fakeAPIPipeline {
	return func(ctx context.Context, hc *http.Client, run *harness.Run) ([]byte, error) {
		client := anthropic.NewClient(option.WithHTTPClient(hc))
		params := anthropic.MessageNewParams{
			Model:     "claude-sonnet-4-5",
			MaxTokens: 512,
			System:    []anthropic.TextBlockParam{{Text: "Answer in one line."}},
			Tools:     []anthropic.ToolUnionParam{anthropicTool(mapBug)},
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))},
		}
		var out strings.Builder
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "%s %s (%d+%d tokens): %s\n", msg.ID, msg.StopReason, msg.Usage.InputTokens, msg.Usage.OutputTokens, msg.Content[0].Text)
		if err := emit(run, "message.received", msg.Content[0].Text); err != nil {
			return nil, err
		}
		s := client.Messages.NewStreaming(ctx, params)
		var acc anthropic.Message
		for s.Next() {
			if err := acc.Accumulate(s.Current()); err != nil {
				return nil, err
			}
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
		s.Close()
		if len(acc.Content) != 1 || acc.Content[0].Text != msg.Content[0].Text || acc.ID != msg.ID {
			return nil, fmt.Errorf("streamed %+v, got %q", acc.Content, msg.Content[0].Text)
		}
		fmt.Fprintf(&out, "streamed %s %s\n", acc.ID, acc.StopReason)
		if err := emit(run, "message.streamed", acc.Content[0].Text); err != nil {
			return nil, err
		}
		empty := params
		empty.Messages = []anthropic.MessageParam{}
		_, err = client.Messages.New(ctx, empty)
		var ae *anthropic.Error
		if !errors.As(err, &ae) {
			return nil, fmt.Errorf("want the API's error, got %v", err)
		}
		fmt.Fprintf(&out, "refused: %d %s: %s\n", ae.StatusCode, ae.Type(), ae.Message)
		return []byte(out.String()), nil
	}
}

// TestAnthropicV2 records a pipeline on anthropic-sdk-go v2 against the
// fake, gates its replay (50 runs, 4 in child processes) and shows that a
// tool schema built from a map is named as the request field that varies.
// (That cassettes recorded through v1 still replay through v2 is
// TestOtherRecordersReplayThroughTheSDK in package cassettes, over a
// cassette recorded through v1.84.0.)
func TestAnthropicV2(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
	path, want := fakeAPIRecordRedirected(t, "https://api.anthropic.com", "anthropic.yaml", anthropicAgent(false),
		"msg_fake_", " end_turn (", "): fakellm echo: Weather in Paris?\n",
		"streamed msg_fake_",
		"refused: 400 invalid_request_error: messages: at least one message is required\n")

	fakeAPIGate(t, "anthropic", path, anthropicAgent(false), want, "ANTHROPIC_API_KEY")
	fakeAPIMapOrder(t, "anthropic-map-order", path, anthropicAgent(true), `["tools"][0]["input_schema"]["required"]`)
}
