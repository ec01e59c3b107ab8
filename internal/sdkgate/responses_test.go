package sdkgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/harness"
)

const responsesModel = "gpt-5-mini"

// weatherTool is the function tool the agent offers (see weatherSchema).
func weatherTool(mapBug bool) responses.ToolUnionParam {
	props, required := weatherSchema(mapBug)
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:        "get_weather",
		Description: openai.String("Weather forecast for a city"),
		Parameters:  map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false},
		Strict:      openai.Bool(true),
	}}
}

// forecast is the agent's local tool: a deterministic forecast from the
// arguments the model chose.
func forecast(arguments string) (string, error) {
	var args struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return "", fmt.Errorf("tool arguments %q: %w", arguments, err)
	}
	return fmt.Sprintf("%d day(s) of sun over %q", args.Days, args.City), nil
}

// emit records a step of the pipeline when it runs under the gate.
func emit(run *harness.Run, kind string, payload any) error {
	if run == nil {
		return nil
	}
	_, err := run.Recorder().Emit(events.Kind(kind), payload)
	return err
}

// responsesStream drains a Responses API stream: the events must be
// numbered 0, 1, 2, ... by sequence_number and end with
// response.completed, whose response is returned with the text the
// output_text deltas spelled.
func responsesStream(s interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
	Close() error
}) (*responses.Response, string, error) {
	defer s.Close()
	var (
		seq   int64
		text  strings.Builder
		final *responses.Response
	)
	for s.Next() {
		ev := s.Current()
		if ev.SequenceNumber != seq {
			return nil, "", fmt.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			r := ev.Response
			final = &r
		}
	}
	if err := s.Err(); err != nil {
		return nil, "", err
	}
	if final == nil {
		return nil, "", errors.New("stream ended without response.completed")
	}
	return final, text.String(), nil
}

// functionCall returns the response's one function call.
func functionCall(r *responses.Response) (responses.ResponseFunctionToolCall, error) {
	for _, item := range r.Output {
		if item.Type == "function_call" {
			return item.AsFunctionCall(), nil
		}
	}
	return responses.ResponseFunctionToolCall{}, fmt.Errorf("response %s has no function call", r.ID)
}

// apiErrorLine renders an OpenAI API error as the pipeline reports it.
func apiErrorLine(err error) (string, error) {
	var ae *openai.Error
	if !errors.As(err, &ae) {
		return "", err
	}
	return fmt.Sprintf("error %d %s %s %s", ae.StatusCode, ae.Type, ae.Code, ae.Param), nil
}

// weatherAgent is a pipeline on openai-go's Responses API with the SDK's
// default options (key and base URL from the environment): a streamed and
// a plain tool call, the tools run locally, a streamed answer from their
// results, two requests the API refuses (streamed and not), and the
// embeddings of the answer and the cities.
func weatherAgent(mapBug bool) fakeAPIPipeline {
	return func(ctx context.Context, hc *http.Client, run *harness.Run) ([]byte, error) {
		client := openai.NewClient(option.WithHTTPClient(hc))
		tools := []responses.ToolUnionParam{weatherTool(mapBug)}
		ask := func(q string) responses.ResponseNewParams {
			return responses.ResponseNewParams{Model: responsesModel, Tools: tools,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(q)}}
		}
		var out strings.Builder
		items := responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Weather in Paris and Oslo?", responses.EasyInputMessageRoleUser),
		}
		streamed, _, err := responsesStream(client.Responses.NewStreaming(ctx, ask("Weather in Paris?")))
		if err != nil {
			return nil, err
		}
		plain, err := client.Responses.New(ctx, ask("Weather in Oslo?"))
		if err != nil {
			return nil, err
		}
		for _, r := range []*responses.Response{streamed, plain} {
			call, err := functionCall(r)
			if err != nil {
				return nil, err
			}
			result, err := forecast(call.Arguments)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&out, "%s %s(%s) = %s\n", call.CallID, call.Name, call.Arguments, result)
			if err := emit(run, "tool.called", map[string]string{"call_id": call.CallID, "arguments": call.Arguments, "result": result}); err != nil {
				return nil, err
			}
			output := responses.ResponseInputItemParamOfFunctionCallOutput(result)
			output.OfFunctionCallOutput.CallID = openai.String(call.CallID)
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: new(call.ToParam())}, output)
		}
		answer, text, err := responsesStream(client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
			Model: responsesModel, Tools: tools, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items},
		}))
		if err != nil {
			return nil, err
		}
		if text != answer.OutputText() {
			return nil, fmt.Errorf("the deltas spell %q, response.completed says %q", text, answer.OutputText())
		}
		fmt.Fprintf(&out, "answer %s (%d+%d tokens): %s\n", answer.ID, answer.Usage.InputTokens, answer.Usage.OutputTokens, text)
		if err := emit(run, "answer.streamed", text); err != nil {
			return nil, err
		}

		tooShort := ask("Weather in Rome?")
		tooShort.MaxOutputTokens = openai.Int(8)
		_, err = client.Responses.New(ctx, tooShort)
		line, err := apiErrorLine(err)
		if err != nil {
			return nil, err
		}
		s := client.Responses.NewStreaming(ctx, tooShort)
		_, _, serr := responsesStream(s)
		sline, err := apiErrorLine(serr)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "%s\nstreamed %s\n", line, sline)
		if err := emit(run, "api.refused", line); err != nil {
			return nil, err
		}

		emb, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
			Model:      openai.EmbeddingModelTextEmbedding3Small,
			Input:      openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{text, "Paris", "Oslo"}},
			Dimensions: openai.Int(8),
		})
		if err != nil {
			return nil, err
		}
		for _, e := range emb.Data {
			fmt.Fprintf(&out, "embedding %d: %.6f\n", e.Index, e.Embedding)
		}
		return []byte(out.String()), emit(run, "embedded", len(emb.Data))
	}
}

// TestResponsesAPI records the weather agent through openai-go's
// Responses and embeddings APIs against the fake, gates its replay (50
// runs, 4 in child processes) and shows that a tool schema built from a
// map is named as the request field that varies.
func TestResponsesAPI(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "test-openai-key")
	path, want := fakeAPIRecordRedirected(t, "https://api.openai.com", "responses.yaml", weatherAgent(false),
		"call_fake_", `get_weather({"city":"Weather in Paris?","country":"Weather in Paris?","days":3,"hourly":true,"units":"Weather in Paris?"})`,
		`= 3 day(s) of sun over "Weather in Oslo?"`,
		"answer resp_fake_", `: fakellm: get_weather returned 3 day(s) of sun over "Weather in Paris?"; get_weather returned`,
		"error 400 invalid_request_error integer_below_min_value max_output_tokens\nstreamed error 400 invalid_request_error integer_below_min_value max_output_tokens\n",
		"embedding 2: [")

	fakeAPIGate(t, "responses", path, weatherAgent(false), want, "OPENAI_API_KEY", "OPENAI_BASE_URL")
	fakeAPIMapOrder(t, "responses-map-order", path, weatherAgent(true), `["tools"][0]["parameters"]["required"]`)
}
