package sdkgate

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// geminiKey is a dummy Gemini API key shaped like a real one, so that the
// secret scan would refuse a cassette it reached.
const geminiKey = "AIzaSyD-codegenieDummyKey0123456789abcd"

// geminiAnswer is what the Gemini pipeline makes of one call.
type geminiAnswer struct {
	Call  string         `json:"call"`
	Text  string         `json:"text,omitempty"`
	Tool  string         `json:"tool,omitempty"`
	Args  map[string]any `json:"args,omitempty"`
	Error string         `json:"error,omitempty"`
}

// geminiUpgradeParams are the parameters of the pipeline's tool.
var geminiUpgradeParams = map[string]*genai.Schema{
	"package":   {Type: genai.TypeString, Description: "the module to upgrade"},
	"version":   {Type: genai.TypeString, Description: "the version to upgrade to"},
	"ecosystem": {Type: genai.TypeString, Description: "npm, Go or PyPI"},
	"manifest":  {Type: genai.TypeString, Description: "the file that pins it"},
	"reason":    {Type: genai.TypeString, Description: "why"},
}

// geminiPipeline asks Gemini through genai with its default options
// (the key from GEMINI_API_KEY, the API's own URL): a summary, the same
// streamed, a streamed call of the upgrade tool, and an empty prompt the
// API refuses. Every parameter of the tool is required, the list built
// from the parameter map: in map order with bug, sorted without.
func geminiPipeline(ctx context.Context, run *harness.Run, cassette string, bug bool) ([]byte, error) {
	hc, err := run.Client(cassette)
	if err != nil {
		return nil, err
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	required := slices.Sorted(maps.Keys(geminiUpgradeParams))
	if bug {
		required = required[:0]
		for name := range geminiUpgradeParams {
			required = append(required, name)
		}
	}
	tools := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: "upgrade_dependency", Description: "Upgrade one dependency in a manifest.",
		Parameters: &genai.Schema{Type: genai.TypeObject, Properties: geminiUpgradeParams, Required: required},
	}}}}}
	const model = "gemini-2.5-flash"
	system := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You review dependency upgrades.", genai.RoleUser)}
	var answers []geminiAnswer
	note := func(a geminiAnswer) error {
		answers = append(answers, a)
		_, err := run.Recorder().Emit("llm.answered", a)
		return err
	}

	res, err := client.Models.GenerateContent(ctx, model, genai.Text("Summarise: lodash 4.17.20 has a prototype pollution bug."), system)
	if err != nil {
		return nil, err
	}
	if err := note(geminiAnswer{Call: "generate", Text: res.Text()}); err != nil {
		return nil, err
	}

	var text strings.Builder
	for chunk, err := range client.Models.GenerateContentStream(ctx, model, genai.Text("Summarise: requests 2.31.0 leaks a proxy header."), system) {
		if err != nil {
			return nil, err
		}
		text.WriteString(chunk.Text())
	}
	if err := note(geminiAnswer{Call: "stream", Text: text.String()}); err != nil {
		return nil, err
	}

	call := geminiAnswer{Call: "stream-tool"}
	for chunk, err := range client.Models.GenerateContentStream(ctx, model, genai.Text("Call upgrade_dependency for lodash in package.json."), tools) {
		if err != nil {
			return nil, err
		}
		for _, fc := range chunk.FunctionCalls() {
			call.Tool, call.Args = fc.Name, fc.Args
		}
	}
	if call.Tool == "" {
		return nil, errors.New("gemini: no tool call")
	}
	if err := note(call); err != nil {
		return nil, err
	}

	_, err = client.Models.GenerateContent(ctx, model, genai.Text(""), nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		return nil, errors.New("gemini: an empty prompt was not refused")
	}
	if err := note(geminiAnswer{Call: "refused", Error: apiErr.Error()}); err != nil {
		return nil, err
	}
	return json.MarshalIndent(answers, "", "  ")
}

// TestGeminiGate gates a pipeline on google.golang.org/genai (Gemini API
// backend, default options): recorded against fakellm with the record
// flag, it passes 50 runs, 4 in child processes, with the key held as
// configuration and absent from the cassette; with its tool's required
// list built in map order it is NONDETERMINISTIC, the report naming that
// list as the request field that varies.
func TestGeminiGate(t *testing.T) {
	g := cloudGate{
		scenario: "gemini",
		api:      "https://generativelanguage.googleapis.com",
		env:      map[string]string{"GEMINI_API_KEY": geminiKey},
		pipeline: geminiPipeline,
	}
	rep := g.run(t, `["tools"][0]["functionDeclarations"][0]["parameters"]["required"]`, geminiKey)
	if rep == nil {
		return
	}
	require.Contains(t, rep.Processes.EnvHeld, "GEMINI_API_KEY")
	out, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NotContains(t, string(out), geminiKey)
}

// TestGeminiKeyRedacted: a Gemini key sent the SDK's way (x-goog-api-key)
// or the REST way (?key=) is redacted in the recorded cassette, and the
// recording replays for a caller with another key either way.
func TestGeminiKeyRedacted(t *testing.T) {
	srv, _ := fakellm.NewHTTPTest(t, fakellm.Config{APIKey: geminiKey})
	rt, err := cassettes.Redirect("https://generativelanguage.googleapis.com", srv.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "keys.yaml")
	ask := func(hc *http.Client, key string) (string, string) {
		client, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: key, HTTPClient: hc})
		require.NoError(t, err)
		res, err := client.Models.GenerateContent(t.Context(), "gemini-2.5-flash", genai.Text("hello"), nil)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), "POST",
			"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent?key="+key,
			strings.NewReader(`{"contents":[{"parts":[{"text":"hello rest"}]}]}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
		return res.Text(), string(b)
	}
	rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: rt, APIKey: geminiKey})
	require.NoError(t, err)
	sdkText, restBody := ask(rec.Client(), geminiKey)
	require.NoError(t, rec.Close())
	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(saved), geminiKey)
	require.Contains(t, string(saved), "key=REDACTED")
	require.Regexp(t, `X-Goog-Api-Key:\s+- REDACTED`, string(saved))

	c, err := cassettes.Open(path, cassettes.Config{})
	require.NoError(t, err)
	gotText, gotBody := ask(c.Client(), "AIzaSyD-anotherDummyKeyForTheReplay0123")
	require.Equal(t, sdkText, gotText)
	require.Equal(t, restBody, gotBody)
	require.NoError(t, c.Close())
}
