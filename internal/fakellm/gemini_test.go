package fakellm

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// geminiClient is a genai client with its default options, its requests
// served in-process by s.
func geminiClient(t *testing.T, s *Server, key string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: key, HTTPClient: &http.Client{Transport: s.Transport()}})
	require.NoError(t, err)
	return c
}

// TestGeminiThroughSDK: genai's GenerateContent and GenerateContentStream
// get the echo answer (the stream in Config.ChunkSize pieces), a declared
// function named in the prompt is called with its required arguments, an
// empty part is refused as the API refuses it, and a wrong key too.
func TestGeminiThroughSDK(t *testing.T) {
	s := New(Config{ChunkSize: 7, APIKey: "gemini-test-key"})
	c := geminiClient(t, s, "gemini-test-key")
	ctx := t.Context()
	cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("be brief", genai.RoleUser)}

	res, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hello gemini"), cfg)
	require.NoError(t, err)
	require.Equal(t, "fakellm echo: hello gemini", res.Text())
	require.Equal(t, genai.FinishReasonStop, res.Candidates[0].FinishReason)
	require.Equal(t, "gemini-2.5-flash", res.ModelVersion)
	require.Equal(t, int32(tokens("be brief")+tokens("hello gemini")), res.UsageMetadata.PromptTokenCount)

	var pieces []string
	var last *genai.GenerateContentResponse
	for chunk, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("hello gemini"), cfg) {
		require.NoError(t, err)
		pieces = append(pieces, chunk.Text())
		last = chunk
	}
	require.Equal(t, chunks("fakellm echo: hello gemini", 7), pieces)
	require.Equal(t, genai.FinishReasonStop, last.Candidates[0].FinishReason)
	require.Equal(t, res.ResponseID, last.ResponseID, "the JSON and the stream answer describe the same response")

	tools := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: "lookup_weather",
		Parameters: &genai.Schema{Type: genai.TypeObject, Required: []string{"city", "days"}, Properties: map[string]*genai.Schema{
			"city": {Type: genai.TypeString}, "days": {Type: genai.TypeInteger}, "units": {Type: genai.TypeString},
		}},
	}}}}}
	for chunk, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("lookup_weather in Oslo"), tools) {
		require.NoError(t, err)
		calls := chunk.FunctionCalls()
		require.Len(t, calls, 1)
		require.Equal(t, "lookup_weather", calls[0].Name)
		require.Equal(t, map[string]any{"city": "lookup_weather in Oslo", "days": float64(len("lookup_weather in Oslo"))}, calls[0].Args)
	}
	res, err = c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("no tool named here"), tools)
	require.NoError(t, err)
	require.Empty(t, res.FunctionCalls())

	_, err = c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text(""), nil)
	var apiErr genai.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 400, apiErr.Code)
	require.Equal(t, "INVALID_ARGUMENT", apiErr.Status)
	require.Contains(t, apiErr.Message, "contents[0].parts[0].data: required oneof field 'data'")

	_, err = geminiClient(t, s, "another-key").Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "API key not valid. Please pass a valid API key.", apiErr.Message)

	_, err = geminiClient(t, New(Config{Mode: HTTPError, Status: 503}), "k").Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 503, apiErr.Code)
	require.Equal(t, "UNAVAILABLE", apiErr.Status)
}

// TestGeminiStreamWire: with alt=sse the stream is server-sent events
// ending in CRLF CRLF, as the API sends them; without it, one JSON array;
// Truncated leaves out the finish reason.
func TestGeminiStreamWire(t *testing.T) {
	post := func(s *Server, path string) (*http.Response, string) {
		req, err := http.NewRequest("POST", "https://generativelanguage.googleapis.com"+path, strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"abc"}]}]}`))
		require.NoError(t, err)
		resp, err := s.Transport().RoundTrip(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(b)
	}
	s := New(Config{ChunkSize: 8})
	resp, body := post(s, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse")
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	frames := strings.Split(strings.TrimSuffix(body, "\r\n\r\n"), "\r\n\r\n")
	require.Len(t, frames, len(chunks("fakellm echo: abc", 8)))
	for _, f := range frames {
		require.True(t, strings.HasPrefix(f, `data: {"candidates":[{"content":{"parts":[{"text":`), f)
	}
	require.Contains(t, frames[len(frames)-1], `"finishReason":"STOP"`)

	resp, body = post(s, "/v1beta/models/gemini-2.5-pro:streamGenerateContent")
	require.Equal(t, "application/json; charset=UTF-8", resp.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(body, `[{"candidates":`) && strings.HasSuffix(body, "}]"), body)
	require.Equal(t, len(frames)-1, strings.Count(body, ",\r\n"))

	_, body = post(New(Config{ChunkSize: 8, Mode: Truncated}), "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse")
	require.NotContains(t, body, "finishReason")
	require.Equal(t, len(frames), strings.Count(body, "data: "), "every piece is sent")
}
