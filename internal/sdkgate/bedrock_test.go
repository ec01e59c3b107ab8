package sdkgate

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/fakellm"
)

const (
	bedrockAPI   = "https://bedrock-runtime.us-east-1.amazonaws.com"
	bedrockModel = "anthropic.claude-3-5-haiku-20241022-v1:0"
)

// bedrockEnv is a user's AWS configuration for Bedrock with dummy
// credentials (n tells sets apart) shaped like real ones, so that the
// secret scan would refuse a cassette they reached.
func bedrockEnv(n string) map[string]string {
	return map[string]string{
		"AWS_REGION":            "us-east-1",
		"AWS_ACCESS_KEY_ID":     "AKIAQX3CODEGENIE000" + n,
		"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYcodegenie0" + n,
		"AWS_SESSION_TOKEN":     "IQoJb3JpZ2luX2VjEdummySessionTokenForCodegenieTests" + n,
		// A CA bundle configures the SDK's own transport: with a client
		// of the caller's (config.WithHTTPClient) LoadDefaultConfig
		// refuses it. Empty is unset.
		"AWS_CA_BUNDLE": "",
	}
}

// bedrockAnswer is what the Bedrock pipeline makes of one call.
type bedrockAnswer struct {
	Call  string `json:"call"`
	Text  string `json:"text,omitempty"`
	Stop  string `json:"stop,omitempty"`
	Tool  string `json:"tool,omitempty"`
	Input string `json:"input,omitempty"`
	Error string `json:"error,omitempty"`
}

// bedrockUpgradeParams are the JSON schema properties of the pipeline's
// tool.
var bedrockUpgradeParams = map[string]any{
	"package":   map[string]any{"type": "string", "description": "the module to upgrade"},
	"version":   map[string]any{"type": "string", "description": "the version to upgrade to"},
	"ecosystem": map[string]any{"type": "string", "description": "npm, Go or PyPI"},
	"manifest":  map[string]any{"type": "string", "description": "the file that pins it"},
	"reason":    map[string]any{"type": "string", "description": "why"},
}

func bedrockText(text string) []types.Message {
	return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}}
}

// bedrockStream reads a ConverseStream to its end: the text, the tool
// input, the stop reason.
func bedrockStream(out *bedrockruntime.ConverseStreamOutput) (text, input string, stop types.StopReason, err error) {
	st := out.GetStream()
	defer st.Close()
	var tb, ib strings.Builder
	for ev := range st.Events() {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := v.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				tb.WriteString(d.Value)
			case *types.ContentBlockDeltaMemberToolUse:
				ib.WriteString(aws.ToString(d.Value.Input))
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = v.Value.StopReason
		}
	}
	return tb.String(), ib.String(), stop, st.Err()
}

// bedrockConfig is run's client of the cassette and the AWS SDK's default
// configuration (region and credentials from the environment) with it.
func bedrockConfig(ctx context.Context, run *harness.Run, cassette string) (*http.Client, aws.Config, error) {
	hc, err := run.Client(cassette)
	if err != nil {
		return nil, aws.Config{}, err
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc))
	return hc, cfg, err
}

// bedrockRequired is the required list of the upgrade tool, built from
// its property map: in map order with bug, sorted without.
func bedrockRequired(bug bool) []string {
	required := slices.Sorted(maps.Keys(bedrockUpgradeParams))
	if bug {
		required = required[:0]
		for name := range bedrockUpgradeParams {
			required = append(required, name)
		}
	}
	return required
}

// bedrockPipeline asks Bedrock through bedrockruntime with the AWS SDK's
// default configuration (config.LoadDefaultConfig: region and credentials
// from the environment, the service's own endpoint): a summary with
// Converse, one with ConverseStream, a streamed call of the upgrade tool,
// and a blank prompt Bedrock refuses. Every property of the tool is
// required, the list built from the property map: in map order with bug,
// sorted without.
func bedrockPipeline(ctx context.Context, run *harness.Run, cassette string, bug bool) ([]byte, error) {
	_, cfg, err := bedrockConfig(ctx, run, cassette)
	if err != nil {
		return nil, err
	}
	client := bedrockruntime.NewFromConfig(cfg)
	required := bedrockRequired(bug)
	tools := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name: aws.String("upgrade_dependency"), Description: aws.String("Upgrade one dependency in a manifest."),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{
			"type": "object", "properties": bedrockUpgradeParams, "required": required,
		})},
	}}}}
	system := []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "You review dependency upgrades."}}
	var answers []bedrockAnswer
	note := func(a bedrockAnswer) error {
		answers = append(answers, a)
		_, err := run.Recorder().Emit("llm.answered", a)
		return err
	}

	out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(bedrockModel), System: system,
		Messages: bedrockText("Summarise: lodash 4.17.20 has a prototype pollution bug.")})
	if err != nil {
		return nil, err
	}
	a := bedrockAnswer{Call: "converse", Stop: string(out.StopReason)}
	if m, ok := out.Output.(*types.ConverseOutputMemberMessage); ok && len(m.Value.Content) > 0 {
		if t, ok := m.Value.Content[0].(*types.ContentBlockMemberText); ok {
			a.Text = t.Value
		}
	}
	if err := note(a); err != nil {
		return nil, err
	}

	for _, c := range []struct {
		call, prompt string
		tools        *types.ToolConfiguration
	}{
		{"stream", "Summarise: requests 2.31.0 leaks a proxy header.", nil},
		{"stream-tool", "Call upgrade_dependency for lodash in package.json.", tools},
	} {
		st, err := client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(bedrockModel), System: system,
			Messages: bedrockText(c.prompt), ToolConfig: c.tools})
		if err != nil {
			return nil, err
		}
		text, input, stop, err := bedrockStream(st)
		if err != nil {
			return nil, err
		}
		a := bedrockAnswer{Call: c.call, Text: text, Input: input, Stop: string(stop)}
		if c.tools != nil {
			a.Tool = "upgrade_dependency"
		}
		if err := note(a); err != nil {
			return nil, err
		}
	}

	_, err = client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(bedrockModel), Messages: bedrockText(" ")})
	var invalid *types.ValidationException
	if !errors.As(err, &invalid) {
		return nil, errors.New("bedrock: a blank prompt was not refused")
	}
	if err := note(bedrockAnswer{Call: "refused", Error: err.Error()}); err != nil {
		return nil, err
	}
	return json.MarshalIndent(answers, "", "  ")
}

// TestBedrockGate gates a pipeline on aws-sdk-go-v2's bedrockruntime
// (config.LoadDefaultConfig, region and credentials from the
// environment): recorded against fakellm with the record flag, it passes
// 50 runs, 4 in child processes, with the AWS variables held as
// configuration and no credential in the cassette, although every
// request is signed anew (SigV4 at each run's own instant, a new
// invocation id); with its tool's required list built in map order it is
// NONDETERMINISTIC, the report naming that list as the request field that
// varies.
func TestBedrockGate(t *testing.T) {
	env := bedrockEnv("1")
	g := cloudGate{scenario: "bedrock", api: bedrockAPI, env: env, pipeline: bedrockPipeline}
	rep := g.run(t, `["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["required"]`,
		env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env["AWS_SESSION_TOKEN"])
	if rep == nil {
		return
	}
	require.Subset(t, rep.Processes.EnvHeld, []string{"AWS_ACCESS_KEY_ID", "AWS_REGION", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "_X_AMZN_TRACE_ID"})
}

// bedrockHeaders notes the headers of every request it passes on.
type bedrockHeaders struct {
	next http.RoundTripper
	sent []http.Header
}

func (h *bedrockHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	h.sent = append(h.sent, req.Header.Clone())
	return h.next.RoundTrip(req)
}

// bedrockConverse sends one Converse through the AWS SDK's default
// configuration over rt and returns the answer's text.
func bedrockConverse(ctx context.Context, rt http.RoundTripper, prompt string, temperature float32) (string, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		return "", err
	}
	out, err := bedrockruntime.NewFromConfig(cfg).Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(bedrockModel),
		Messages: bedrockText(prompt), InferenceConfig: &types.InferenceConfiguration{Temperature: aws.Float32(temperature)}})
	if err != nil {
		return "", err
	}
	return out.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberText).Value, nil
}

// TestBedrockReplayIgnoresSignatures: a Converse recorded through the AWS
// SDK with one set of credentials, a session token and the real clock
// replays through the SDK with other credentials, another token, a
// synctest bubble's clock, another retry limit and another HOME, so that
// Authorization, X-Amz-Date, X-Amz-Security-Token, Amz-Sdk-Invocation-Id
// and Amz-Sdk-Request all differ from the recording; a changed body
// field still misses. The cassette holds no credential.
func TestBedrockReplayIgnoresSignatures(t *testing.T) {
	srv, _ := fakellm.NewHTTPTest(t, fakellm.Config{})
	rt, err := cassettes.Redirect(bedrockAPI, srv.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "signed.yaml")
	recorded := bedrockEnv("1")
	for k, v := range recorded {
		t.Setenv(k, v)
	}
	rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: rt})
	require.NoError(t, err)
	atRecord := &bedrockHeaders{next: rec.Client().Transport}
	text, err := bedrockConverse(t.Context(), atRecord, "Summarise: lodash 4.17.20.", 0)
	require.NoError(t, err)
	require.Equal(t, "fakellm echo: Summarise: lodash 4.17.20.", text)
	require.NoError(t, rec.Close())

	for k, v := range bedrockEnv("2") {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_MAX_ATTEMPTS", "5")
	// Another home, without ~/.aws: the configuration loader is not
	// broken by it, and nothing it read there reaches the request.
	t.Setenv("HOME", filepath.Join(t.TempDir(), "nowhere"))
	atReplay := &bedrockHeaders{}
	synctest.Test(t, func(t *testing.T) {
		c, err := cassettes.Open(path, cassettes.Config{})
		require.NoError(t, err)
		atReplay.next = c.Client().Transport
		got, err := bedrockConverse(t.Context(), atReplay, "Summarise: lodash 4.17.20.", 0)
		require.NoError(t, err)
		require.Equal(t, text, got)

		_, err = bedrockConverse(t.Context(), atReplay, "Summarise: lodash 4.17.20.", 0.5)
		require.ErrorIs(t, err, cassettes.ErrInteractionNotFound, "a changed temperature is another request")
		require.ErrorContains(t, err, `["inferenceConfig"]["temperature"]`)
		require.NoError(t, c.Close())
	})
	require.Len(t, atRecord.sent, 1)
	// A miss says it is not worth retrying, so the SDK sends it once,
	// whatever AWS_MAX_ATTEMPTS allows.
	require.Len(t, atReplay.sent, 1+1)
	for _, h := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token", "Amz-Sdk-Invocation-Id", "Amz-Sdk-Request"} {
		was, is := atRecord.sent[0].Get(h), atReplay.sent[0].Get(h)
		require.NotEmpty(t, was, h)
		require.NotEmpty(t, is, h)
		require.NotEqual(t, was, is, "%s is the same on both sides: the test proves nothing about it", h)
	}

	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	_, signature, _ := strings.Cut(atRecord.sent[0].Get("Authorization"), "Signature=")
	require.NotEmpty(t, signature)
	for _, v := range []string{recorded["AWS_ACCESS_KEY_ID"], recorded["AWS_SECRET_ACCESS_KEY"], recorded["AWS_SESSION_TOKEN"], signature,
		atRecord.sent[0].Get("X-Amz-Date"), atRecord.sent[0].Get("Amz-Sdk-Invocation-Id")} {
		require.NotContains(t, string(saved), v)
	}
}
