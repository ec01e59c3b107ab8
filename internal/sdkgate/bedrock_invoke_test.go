package sdkgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/harness"
)

// bedrockInvokeBody is an InvokeModel body for Claude: a Messages request
// with anthropic_version, the upgrade tool (its required list as given)
// and prompt.
func bedrockInvokeBody(prompt string, required []string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"anthropic_version": "bedrock-2023-05-31", "max_tokens": 256, "system": "You review dependency upgrades.",
		"tools": []any{map[string]any{"name": "upgrade_dependency", "description": "Upgrade one dependency in a manifest.",
			"input_schema": map[string]any{"type": "object", "properties": bedrockUpgradeParams, "required": required}}},
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
	})
}

// bedrockInvokePipeline asks Claude on Bedrock through InvokeModel and
// InvokeModelWithResponseStream, with the AWS SDK's default configuration
// (the stream's chunks read as Anthropic events by anthropic-sdk-go's
// accumulator), then through anthropic-sdk-go's Bedrock option (its
// Messages calls sent as InvokeModel, signed with the same credentials),
// plain and streamed, and sends a body Bedrock refuses (no
// anthropic_version). Every request offers the upgrade tool, whose
// required list is built from the property map: in map order with bug,
// sorted without.
func bedrockInvokePipeline(ctx context.Context, run *harness.Run, cassette string, bug bool) ([]byte, error) {
	hc, cfg, err := bedrockConfig(ctx, run, cassette)
	if err != nil {
		return nil, err
	}
	client := bedrockruntime.NewFromConfig(cfg)
	required := bedrockRequired(bug)
	var answers []bedrockAnswer
	note := func(a bedrockAnswer) error {
		answers = append(answers, a)
		_, err := run.Recorder().Emit("llm.answered", a)
		return err
	}

	body, err := bedrockInvokeBody("Summarise: lodash 4.17.20 has a prototype pollution bug.", required)
	if err != nil {
		return nil, err
	}
	out, err := client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(bedrockModel), Body: body,
		ContentType: aws.String("application/json"), Accept: aws.String("application/json")})
	if err != nil {
		return nil, err
	}
	var msg anthropic.Message
	if err := json.Unmarshal(out.Body, &msg); err != nil {
		return nil, err
	}
	if err := note(bedrockAnswer{Call: "invoke", Text: messageText(msg), Stop: string(msg.StopReason)}); err != nil {
		return nil, err
	}

	body, err = bedrockInvokeBody("Summarise: requests 2.31.0 leaks a proxy header.", required)
	if err != nil {
		return nil, err
	}
	st, err := client.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{ModelId: aws.String(bedrockModel), Body: body})
	if err != nil {
		return nil, err
	}
	var acc anthropic.Message
	for ev := range st.GetStream().Events() {
		chunk, ok := ev.(*types.ResponseStreamMemberChunk)
		if !ok {
			return nil, fmt.Errorf("bedrock: unexpected stream event %T", ev)
		}
		var e anthropic.MessageStreamEventUnion
		if err := json.Unmarshal(chunk.Value.Bytes, &e); err != nil {
			return nil, err
		}
		if err := acc.Accumulate(e); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(st.GetStream().Err(), st.GetStream().Close()); err != nil {
		return nil, err
	}
	if err := note(bedrockAnswer{Call: "invoke-stream", Text: messageText(acc), Stop: string(acc.StopReason)}); err != nil {
		return nil, err
	}

	claude := anthropic.NewClient(anthropicoption.WithHTTPClient(hc), bedrock.WithConfig(cfg))
	params := anthropic.MessageNewParams{Model: bedrockModel, MaxTokens: 256,
		System: []anthropic.TextBlockParam{{Text: "You review dependency upgrades."}},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "upgrade_dependency", Description: anthropic.String("Upgrade one dependency in a manifest."),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: bedrockUpgradeParams, Required: required}}}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Summarise: left-pad 1.3.0 is unpublished."))}}
	sdkMsg, err := claude.Messages.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if err := note(bedrockAnswer{Call: "anthropic-sdk", Text: messageText(*sdkMsg), Stop: string(sdkMsg.StopReason)}); err != nil {
		return nil, err
	}
	s := claude.Messages.NewStreaming(ctx, params)
	acc = anthropic.Message{}
	for s.Next() {
		if err := acc.Accumulate(s.Current()); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(s.Err(), s.Close()); err != nil {
		return nil, err
	}
	if acc.ID != sdkMsg.ID || messageText(acc) != messageText(*sdkMsg) {
		return nil, fmt.Errorf("anthropic-sdk streamed %s %q, plain %s %q", acc.ID, messageText(acc), sdkMsg.ID, messageText(*sdkMsg))
	}
	if err := note(bedrockAnswer{Call: "anthropic-sdk-stream", Text: messageText(acc), Stop: string(acc.StopReason)}); err != nil {
		return nil, err
	}

	_, err = client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(bedrockModel),
		Body: []byte(`{"max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)})
	var invalid *types.ValidationException
	if !errors.As(err, &invalid) {
		return nil, fmt.Errorf("bedrock: a body without anthropic_version was not refused: %v", err)
	}
	if err := note(bedrockAnswer{Call: "refused", Error: invalid.ErrorMessage()}); err != nil {
		return nil, err
	}
	return json.MarshalIndent(answers, "", "  ")
}

// messageText is the text of m's text blocks.
func messageText(m anthropic.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestBedrockInvokeGate gates a pipeline on Claude on Bedrock:
// bedrockruntime's InvokeModel and InvokeModelWithResponseStream (whose
// event stream carries the Anthropic events base64-encoded in chunk
// events) and anthropic-sdk-go's Bedrock option, with the AWS SDK's
// default configuration: recorded against fakellm with the record flag,
// it passes 50 runs, 4 in child processes, with the AWS variables held as
// configuration and no credential in the cassette, the review folding
// each answer as a Claude message; with its tool's
// required list built in map order it is NONDETERMINISTIC, the report
// naming that list as the request field that varies.
func TestBedrockInvokeGate(t *testing.T) {
	env := bedrockEnv("1")
	g := cloudGate{scenario: "bedrock-invoke", api: bedrockAPI, env: env, pipeline: bedrockInvokePipeline}
	rep := g.run(t, `["tools"][0]["input_schema"]["required"]`, env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env["AWS_SESSION_TOKEN"])
	if rep == nil {
		return
	}
	require.Subset(t, rep.Processes.EnvHeld, []string{"AWS_ACCESS_KEY_ID", "AWS_REGION", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"})
	requireFolded(t, rep.Recorded[0], map[string]int{"anthropic-messages": 5}, 0)
}
