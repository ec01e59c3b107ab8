package cassettes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/codegenie/codegenie/cassettes"
	"github.com/stretchr/testify/require"
	vcr4 "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
	recorder4 "gopkg.in/dnaeon/go-vcr.v4/pkg/recorder"
)

var update = flag.Bool("update", false, "re-record testdata/recorders/anthropic-v4.yaml with go-vcr v4 against a local fake")

// othersCassette was recorded by go-vcr v4's recorder through
// anthropic-sdk-go v1.84.0, shaped as other recorders and SDKs leave
// cassettes: Content-Type with a charset, no Anthropic-Version, JSON bodies
// re-encoded with other key order and indentation, the key header replaced
// by "[FILTERED]". Replayed here through v2, it is the proof that cassettes
// recorded through v1 still replay (-update records it through v2).
var othersCassette = filepath.Join("testdata", "recorders", "anthropic-v4.yaml")

// anthropicCalls are the calls TestOtherRecordersReplayThroughTheSDK
// makes, each with what the API (the fake) answers.
type anthropicCall struct {
	name   string
	params anthropic.MessageNewParams
	stream bool
}

func anthropicCalls() []anthropicCall {
	user := func(s string) []anthropic.MessageParam {
		return []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(s))}
	}
	tool := anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Weather in a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}
	return []anthropicCall{
		{"json", anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 256, Messages: user("Say hello.")}, false},
		{"sse", anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 256, Messages: user("Stream a greeting.")}, true},
		{"tool use", anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 256, Messages: user("Weather in Paris?"),
			Tools: []anthropic.ToolUnionParam{{OfTool: &tool}}}, false},
		{"thinking", anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 2048, Messages: user("Think, then answer: 2+2?"),
			Thinking: anthropic.ThinkingConfigParamOfEnabled(1024)}, true},
		{"401", anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 256, Messages: user("This key is revoked.")}, false},
	}
}

// run makes one call and summarises what the SDK returned.
func (c anthropicCall) run(ctx context.Context, client anthropic.Client) (string, error) {
	var msg anthropic.Message
	if c.stream {
		s := client.Messages.NewStreaming(ctx, c.params)
		defer s.Close()
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				return "", err
			}
		}
		if err := s.Err(); err != nil {
			return "", err
		}
	} else {
		m, err := client.Messages.New(ctx, c.params)
		if err != nil {
			return "", err
		}
		msg = *m
	}
	var parts []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			parts = append(parts, "text:"+b.Text)
		case "thinking":
			parts = append(parts, "thinking:"+b.Thinking+" sig:"+b.Signature)
		case "tool_use":
			parts = append(parts, "tool_use:"+b.Name+string(b.Input))
		}
	}
	return fmt.Sprintf("%s %s %s", msg.ID, msg.StopReason, strings.Join(parts, " | ")), nil
}

// TestOtherRecordersReplayThroughTheSDK replays the cassette other
// recorders' conventions produced (see othersCassette) through the official
// Anthropic SDK with its default options: JSON, SSE, tool use, extended
// thinking and a 401. With -update it records the cassette first.
func TestOtherRecordersReplayThroughTheSDK(t *testing.T) {
	if *update {
		recordOthersCassette(t)
	}
	want := []string{
		"msg_01json end_turn text:Hello!",
		"msg_01sse end_turn text:Hello, streamed!",
		`msg_01tool tool_use text:I'll check. | tool_use:get_weather{"city":"Paris"}`,
		"msg_01think end_turn thinking:2+2 is 4. sig:EqQBCgIYAhIM | text:4",
	}
	c, err := cassettes.Open(othersCassette, cassettes.Config{})
	require.NoError(t, err)
	client := anthropic.NewClient(option.WithHTTPClient(c.Client()), option.WithAPIKey("sk-ant-api03-replaying-key-0123456789"))
	for i, call := range anthropicCalls() {
		got, err := call.run(context.Background(), client)
		if call.name == "401" {
			var ae *anthropic.Error
			require.ErrorAs(t, err, &ae)
			require.Equal(t, 401, ae.StatusCode)
			require.Contains(t, ae.RawJSON(), "authentication_error")
			continue
		}
		require.NoError(t, err, call.name)
		require.Equal(t, want[i], got, call.name)
	}
	require.NoError(t, c.Close())
}

// recordOthersCassette records anthropicCalls through go-vcr v4's
// recorder against fakeAnthropic, reshaping each request as other SDKs
// send it before the recorder sees it.
func recordOthersCassette(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(fakeAnthropic))
	defer srv.Close()
	toFake, err := cassettes.Redirect("https://api.anthropic.com", srv.URL, srv.Client().Transport)
	require.NoError(t, err)
	name := strings.TrimSuffix(othersCassette, ".yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
	os.Remove(othersCassette)
	rec, err := recorder4.New(name,
		recorder4.WithMode(recorder4.ModeRecordOnly),
		recorder4.WithRealTransport(toFake),
		recorder4.WithSkipRequestLatency(true),
		recorder4.WithHook(func(i *vcr4.Interaction) error {
			i.Request.Headers.Set("X-Api-Key", "[FILTERED]")
			for k := range i.Request.Headers {
				if strings.HasPrefix(k, "X-Stainless") || k == "User-Agent" || k == "Idempotency-Key" {
					i.Request.Headers.Del(k)
				}
			}
			i.Response.Headers.Del("Date")
			i.Response.Duration = 0
			return nil
		}, recorder4.AfterCaptureHook))
	require.NoError(t, err)
	client := anthropic.NewClient(option.WithHTTPClient(&http.Client{Transport: reshape{rec}}), option.WithAPIKey("sk-ant-api03-recording-key-0123456789"), option.WithMaxRetries(0))
	for _, call := range anthropicCalls() {
		_, err := call.run(context.Background(), client)
		if call.name == "401" {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err, call.name)
	}
	require.NoError(t, rec.Stop())
}

// reshape sends requests as another SDK would: JSON re-encoded (keys in
// another order, indented), Content-Type with a charset, no
// Anthropic-Version.
type reshape struct{ next http.RoundTripper }

func (r reshape) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(&b)
	out.ContentLength = int64(b.Len())
	out.Header.Set("Content-Type", "application/json; charset=utf-8")
	out.Header.Del("Anthropic-Version")
	return r.next.RoundTrip(out)
}

// fakeAnthropic answers as the Messages API does, by the prompt.
func fakeAnthropic(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	w.Header().Set("Request-Id", "req_fake")
	json := func(status int, s string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, s)
	}
	sse := func(events ...string) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for _, e := range events {
			typ, data, _ := strings.Cut(e, " ")
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
		}
	}
	start := func(id string) string {
		return `message_start {"type":"message_start","message":{"id":"` + id + `","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`
	}
	const stop = `message_stop {"type":"message_stop"}`
	delta := `message_delta {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`
	switch {
	case strings.Contains(body, "Say hello."):
		json(200, `{"id":"msg_01json","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":3}}`)
	case strings.Contains(body, "Stream a greeting."):
		sse(start("msg_01sse"),
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`ping {"type":"ping"}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello, "}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"streamed!"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`, delta, stop)
	case strings.Contains(body, "Weather in Paris?"):
		json(200, `{"id":"msg_01tool","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"I'll check."},{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":20}}`)
	case strings.Contains(body, "Think, then answer"):
		sse(start("msg_01think"),
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"2+2 is 4."}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"4"}}`,
			`content_block_stop {"type":"content_block_stop","index":1}`, delta, stop)
	default:
		json(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	}
}
