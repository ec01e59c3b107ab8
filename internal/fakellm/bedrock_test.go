package fakellm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsstream "github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithystream "github.com/aws/smithy-go/eventstream"
	"github.com/stretchr/testify/require"
)

// TestEventFramesDecode: the frames appendEventFrame writes decode, CRCs
// checked, with both of the AWS SDK's event-stream decoders (the one in
// aws/protocol/eventstream and smithy-go's, which bedrockruntime's
// ConverseStream uses), headers and payload intact; a flipped byte
// anywhere is refused by both.
func TestEventFramesDecode(t *testing.T) {
	var b []byte
	payloads := []string{`{"role":"assistant"}`, `{"contentBlockIndex":0,"delta":{"text":"héllo"}}`, ``}
	for i, p := range payloads {
		b = appendEventFrame(b, []string{"messageStart", "contentBlockDelta", "messageStop"}[i], []byte(p))
	}
	aws := awsstream.NewDecoder()
	smithy := smithystream.NewDecoder()
	ra, rs := bytes.NewReader(b), bytes.NewReader(b)
	for i, p := range payloads {
		ma, err := aws.Decode(ra, nil)
		require.NoError(t, err)
		ms, err := smithy.Decode(rs, nil)
		require.NoError(t, err)
		require.Equal(t, p, string(ma.Payload))
		require.Equal(t, p, string(ms.Payload))
		want := map[string]string{":event-type": []string{"messageStart", "contentBlockDelta", "messageStop"}[i], ":content-type": "application/json", ":message-type": "event"}
		for name, v := range want {
			require.Equal(t, v, ma.Headers.Get(name).String(), name)
			require.Equal(t, v, ms.Headers.Get(name).String(), name)
		}
		require.Len(t, ma.Headers, 3)
	}
	_, err := aws.Decode(ra, nil)
	require.ErrorIs(t, err, io.EOF)

	// The first frame, checked by hand: lengths and both CRCs.
	total := binary.BigEndian.Uint32(b[0:4])
	require.Equal(t, crc32.ChecksumIEEE(b[:8]), binary.BigEndian.Uint32(b[8:12]))
	require.Equal(t, crc32.ChecksumIEEE(b[:total-4]), binary.BigEndian.Uint32(b[total-4:total]))

	for _, at := range []int{2, 9, 20, int(total) - 6, int(total) - 1} {
		bad := bytes.Clone(b)
		bad[at] ^= 0x40
		_, errA := awsstream.NewDecoder().Decode(bytes.NewReader(bad), nil)
		_, errS := smithystream.NewDecoder().Decode(bytes.NewReader(bad), nil)
		require.Error(t, errA, "byte %d", at)
		require.Error(t, errS, "byte %d", at)
	}
}

// bedrockClient is a bedrockruntime client with static credentials, its
// requests served in-process by s.
func bedrockClient(s *Server, keyID string) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(keyID, "secret", ""),
		HTTPClient:  &http.Client{Transport: s.Transport()},
	})
}

// TestBedrockThroughSDK: bedrockruntime's Converse and ConverseStream
// get the echo answer (the stream's text deltas in Config.ChunkSize
// pieces, then the stop reason and usage), a tool named in the prompt is
// called (its input streamed as JSON pieces), a blank text block is
// refused with Bedrock's ValidationException, a failing mode gives the
// exception of its status, and a wrong access key is refused.
func TestBedrockThroughSDK(t *testing.T) {
	s := New(Config{ChunkSize: 6, APIKey: "AKIDFAKELLM"})
	c := bedrockClient(s, "AKIDFAKELLM")
	ctx := t.Context()
	model := "anthropic.claude-3-5-haiku-20241022-v1:0"
	msg := func(text string) []types.Message {
		return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}}
	}
	system := []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "be brief"}}

	out, err := c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msg("hello bedrock"), System: system})
	require.NoError(t, err)
	m := out.Output.(*types.ConverseOutputMemberMessage).Value
	require.Equal(t, "fakellm echo: hello bedrock", m.Content[0].(*types.ContentBlockMemberText).Value)
	require.Equal(t, types.StopReasonEndTurn, out.StopReason)
	require.Equal(t, int32(tokens("be brief")+tokens("hello bedrock")), *out.Usage.InputTokens)

	st, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(model), Messages: msg("hello bedrock"), System: system})
	require.NoError(t, err)
	var pieces []string
	var stop types.StopReason
	var usage *types.TokenUsage
	for ev := range st.GetStream().Events() {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			pieces = append(pieces, v.Value.Delta.(*types.ContentBlockDeltaMemberText).Value)
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = v.Value.StopReason
		case *types.ConverseStreamOutputMemberMetadata:
			usage = v.Value.Usage
		}
	}
	require.NoError(t, st.GetStream().Close())
	require.NoError(t, st.GetStream().Err())
	require.Equal(t, chunks("fakellm echo: hello bedrock", 6), pieces)
	require.Equal(t, types.StopReasonEndTurn, stop)
	require.Equal(t, *out.Usage, *usage)

	tools := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name: aws.String("lookup_weather"),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{
			"type": "object", "required": []string{"city"},
			"properties": map[string]any{"city": map[string]any{"type": "string"}, "units": map[string]any{"type": "string"}},
		})},
	}}}}
	out, err = c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msg("lookup_weather in Oslo"), ToolConfig: tools})
	require.NoError(t, err)
	require.Equal(t, types.StopReasonToolUse, out.StopReason)
	use := out.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberToolUse).Value
	require.Equal(t, "lookup_weather", *use.Name)
	var args map[string]any
	require.NoError(t, use.Input.UnmarshalSmithyDocument(&args))
	require.Equal(t, map[string]any{"city": "lookup_weather in Oslo"}, args)

	st, err = c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(model), Messages: msg("lookup_weather in Oslo"), ToolConfig: tools})
	require.NoError(t, err)
	var input strings.Builder
	for ev := range st.GetStream().Events() {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			require.Equal(t, *use.ToolUseId, *v.Value.Start.(*types.ContentBlockStartMemberToolUse).Value.ToolUseId)
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			input.WriteString(*v.Value.Delta.(*types.ContentBlockDeltaMemberToolUse).Value.Input)
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = v.Value.StopReason
		}
	}
	require.NoError(t, st.GetStream().Close())
	require.JSONEq(t, `{"city":"lookup_weather in Oslo"}`, input.String())
	require.Equal(t, types.StopReasonToolUse, stop)

	_, err = c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msg(" ")})
	var invalid *types.ValidationException
	require.ErrorAs(t, err, &invalid)
	require.Equal(t, "The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the text field, and try again.", invalid.ErrorMessage())

	_, err = bedrockClient(New(Config{Mode: HTTPError, Status: 424}), "k").Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msg("hi")})
	var modelErr *types.ModelErrorException
	require.ErrorAs(t, err, &modelErr)

	_, err = bedrockClient(s, "AKIDOTHER").Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msg("hi")})
	require.Error(t, err)
	require.Contains(t, err.Error(), "UnrecognizedClientException")
	require.False(t, errors.As(err, &invalid))
}

// TestBedrockInvokeThroughSDK: bedrockruntime's InvokeModel of a Claude
// model answers the Messages API's message, and
// InvokeModelWithResponseStream its events, each a chunk whose bytes are
// one event's JSON (no ping; message_stop with the invocation metrics);
// a body without anthropic_version, or with model, and a model not of
// Anthropic are refused with a ValidationException.
func TestBedrockInvokeThroughSDK(t *testing.T) {
	s := New(Config{ChunkSize: 6, APIKey: "AKIDFAKELLM"})
	c := bedrockClient(s, "AKIDFAKELLM")
	ctx := t.Context()
	model := aws.String("anthropic.claude-3-5-haiku-20241022-v1:0")
	body := []byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"system":"be brief","messages":[{"role":"user","content":"hello bedrock"}]}`)

	out, err := c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: model, Body: body, ContentType: aws.String("application/json")})
	require.NoError(t, err)
	var msg anthropicMessage
	require.NoError(t, json.Unmarshal(out.Body, &msg))
	require.Equal(t, "fakellm echo: hello bedrock", msg.Content[0].Text)
	require.Equal(t, "anthropic.claude-3-5-haiku-20241022-v1:0", msg.Model)
	require.Equal(t, "end_turn", *msg.StopReason)

	st, err := c.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{ModelId: model, Body: body})
	require.NoError(t, err)
	var kinds, pieces []string
	for ev := range st.GetStream().Events() {
		chunk, ok := ev.(*types.ResponseStreamMemberChunk)
		require.True(t, ok, "%T", ev)
		var e struct {
			Type    string `json:"type"`
			Message *struct {
				ID string `json:"id"`
			} `json:"message"`
			Delta struct {
				Text string `json:"text"`
			} `json:"delta"`
			Metrics map[string]int `json:"amazon-bedrock-invocationMetrics"`
		}
		require.NoError(t, json.Unmarshal(chunk.Value.Bytes, &e), "%s", chunk.Value.Bytes)
		kinds = append(kinds, e.Type)
		switch e.Type {
		case "message_start":
			require.Equal(t, msg.ID, e.Message.ID, "the JSON answer and the stream describe one message")
		case "content_block_delta":
			pieces = append(pieces, e.Delta.Text)
		case "message_stop":
			require.Equal(t, map[string]int{"inputTokenCount": int(msg.Usage.InputTokens), "outputTokenCount": int(msg.Usage.OutputTokens),
				"invocationLatency": 0, "firstByteLatency": 0}, e.Metrics)
		}
	}
	require.NoError(t, st.GetStream().Close())
	require.NoError(t, st.GetStream().Err())
	require.Equal(t, chunks("fakellm echo: hello bedrock", 6), pieces)
	require.Equal(t, "message_start content_block_start "+strings.Repeat("content_block_delta ", len(pieces))+"content_block_stop message_delta message_stop",
		strings.Join(kinds, " "))

	for _, tt := range []struct{ name, model, body, says string }{
		{"no anthropic_version", *model, `{"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, "required key [anthropic_version] not found"},
		{"model in the body", *model, `{"anthropic_version":"bedrock-2023-05-31","model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, "extraneous key [model]"},
		{"no max_tokens", *model, `{"anthropic_version":"bedrock-2023-05-31","messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
		{"not an Anthropic model", "amazon.titan-text-express-v1", `{"inputText":"hi"}`, "Anthropic models"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(tt.model), Body: []byte(tt.body)})
			var invalid *types.ValidationException
			require.ErrorAs(t, err, &invalid)
			require.Contains(t, invalid.ErrorMessage(), tt.says)
		})
	}
}
