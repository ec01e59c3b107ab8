package sdkgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/harness"
)

const ollamaModel = "llama3.2"

// ollamaHost is the server a user's Ollama client talks to: OLLAMA_HOST
// (a host:port or a URL), else Ollama's default address.
func ollamaHost() string {
	h := os.Getenv("OLLAMA_HOST")
	switch {
	case h == "":
		return "http://127.0.0.1:11434"
	case !strings.Contains(h, "://"):
		return "http://" + h
	}
	return strings.TrimSuffix(h, "/")
}

// ollamaMessage is a message of Ollama's /api/chat, as in its api package.
type ollamaMessage struct {
	Role      string           `json:"role"`
	Content   string           `json:"content"`
	ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
	ToolName  string           `json:"tool_name,omitempty"`
}

type ollamaToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// ollamaChatResponse is one object of an /api/chat answer: the whole
// answer, or one line of its NDJSON stream.
type ollamaChatResponse struct {
	Model      string        `json:"model"`
	Message    ollamaMessage `json:"message"`
	Done       bool          `json:"done"`
	DoneReason string        `json:"done_reason"`
	EvalCount  int           `json:"eval_count"`
	Error      string        `json:"error"`
}

// ollamaTool is the weather tool in Ollama's shape (see weatherSchema).
func ollamaTool(mapBug bool) map[string]any {
	props, required := weatherSchema(mapBug)
	return map[string]any{"type": "function", "function": map[string]any{
		"name": "get_weather", "description": "Weather forecast for a city",
		"parameters": map[string]any{"type": "object", "properties": props, "required": required},
	}}
}

// ollamaChat posts req to /api/chat and folds the answer: the NDJSON
// stream (Ollama's default) line by line until the line with done, or
// the one JSON object when req has "stream": false. A status >= 400 is an
// error carrying Ollama's {"error": ...} message.
func ollamaChat(ctx context.Context, hc *http.Client, req map[string]any) (ollamaChatResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return ollamaChatResponse{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, ollamaHost()+"/api/chat", bytes.NewReader(body))
	if err != nil {
		return ollamaChatResponse{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(hreq)
	if err != nil {
		return ollamaChatResponse{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		var e ollamaChatResponse
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
			return ollamaChatResponse{}, fmt.Errorf("ollama: status %d: %q", resp.StatusCode, b)
		}
		return ollamaChatResponse{}, &ollamaError{status: resp.StatusCode, msg: e.Error}
	}
	if stream, ok := req["stream"].(bool); ok && !stream {
		var r ollamaChatResponse
		return r, json.NewDecoder(resp.Body).Decode(&r)
	}
	var (
		folded ollamaChatResponse
		text   strings.Builder
	)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var line ollamaChatResponse
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return ollamaChatResponse{}, fmt.Errorf("ollama: stream line %q: %w", sc.Bytes(), err)
		}
		if line.Error != "" {
			return ollamaChatResponse{}, &ollamaError{status: resp.StatusCode, msg: line.Error}
		}
		text.WriteString(line.Message.Content)
		folded.Message.ToolCalls = append(folded.Message.ToolCalls, line.Message.ToolCalls...)
		if line.Done {
			folded.Model, folded.Done, folded.DoneReason, folded.EvalCount = line.Model, true, line.DoneReason, line.EvalCount
		}
	}
	if err := sc.Err(); err != nil {
		return ollamaChatResponse{}, err
	}
	if !folded.Done {
		return ollamaChatResponse{}, errors.New("ollama: stream ended before done")
	}
	folded.Message.Role, folded.Message.Content = "assistant", text.String()
	return folded, nil
}

type ollamaError struct {
	status int
	msg    string
}

func (e *ollamaError) Error() string { return fmt.Sprintf("ollama: status %d: %s", e.status, e.msg) }

// ollamaAgent is a pipeline on Ollama over plain net/http, at OLLAMA_HOST:
// a streamed chat (the default) that calls the weather tool, the tool run
// locally, its result sent back in a chat with "stream": false, a chat
// Ollama refuses, and the same model through Ollama's OpenAI-compatible
// endpoint with openai-go (default options but the base URL), plain,
// streamed and refused.
func ollamaAgent(mapBug bool) fakeAPIPipeline {
	return func(ctx context.Context, hc *http.Client, run *harness.Run) ([]byte, error) {
		var out strings.Builder
		user := ollamaMessage{Role: "user", Content: "Weather in Paris?"}
		tools := []any{ollamaTool(mapBug)}
		called, err := ollamaChat(ctx, hc, map[string]any{"model": ollamaModel, "messages": []ollamaMessage{user}, "tools": tools})
		if err != nil {
			return nil, err
		}
		if len(called.Message.ToolCalls) != 1 {
			return nil, fmt.Errorf("want one tool call, got %+v", called.Message)
		}
		call := called.Message.ToolCalls[0]
		result, err := forecast(string(call.Function.Arguments))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "%s %s(%s) = %s\n", call.ID, call.Function.Name, call.Function.Arguments, result)
		if err := emit(run, "tool.called", map[string]string{"id": call.ID, "result": result}); err != nil {
			return nil, err
		}
		answer, err := ollamaChat(ctx, hc, map[string]any{"model": ollamaModel, "stream": false, "tools": tools, "messages": []ollamaMessage{
			user, called.Message, {Role: "tool", ToolName: call.Function.Name, Content: result},
		}})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "answer (%d tokens, %s): %s\n", answer.EvalCount, answer.DoneReason, answer.Message.Content)
		if err := emit(run, "answer.received", answer.Message.Content); err != nil {
			return nil, err
		}
		_, err = ollamaChat(ctx, hc, map[string]any{"messages": []ollamaMessage{user}})
		var oe *ollamaError
		if !errors.As(err, &oe) {
			return nil, fmt.Errorf("want Ollama's error, got %v", err)
		}
		fmt.Fprintf(&out, "refused: %d %s\n", oe.status, oe.msg)

		client := openai.NewClient(option.WithHTTPClient(hc), option.WithBaseURL(ollamaHost()+"/v1/"))
		params := openai.ChatCompletionNewParams{Model: ollamaModel, Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Answer in one line."), openai.UserMessage(answer.Message.Content),
		}}
		plain, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return nil, err
		}
		s := client.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			return nil, err
		}
		s.Close()
		if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != plain.Choices[0].Message.Content {
			return nil, fmt.Errorf("streamed %+v, plain %q", acc.Choices, plain.Choices[0].Message.Content)
		}
		fmt.Fprintf(&out, "openai-compatible %s: %s\n", plain.ID, plain.Choices[0].Message.Content)
		_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Messages: params.Messages})
		line, err := apiErrorLine(err)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&out, "openai-compatible %s\n", line)
		return []byte(out.String()), emit(run, "compat.answered", plain.Choices[0].Message.Content)
	}
}

// TestOllama records the Ollama agent against the fake at OLLAMA_HOST,
// as a user points their client at a server, gates its replay (50 runs,
// 4 in child processes, which hold OLLAMA_HOST as configuration) and
// shows that a tool schema built from a map is named as the request field
// that varies.
func TestOllama(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "ollama")
	srv := fakeAPIServer(t)
	t.Setenv("OLLAMA_HOST", srv.URL)
	path := filepath.Join(t.TempDir(), "ollama.yaml")
	want := fakeAPIRecord(t, path, srv.Client().Transport, ollamaAgent(false))
	for _, s := range []string{
		`call_fake_`, ` get_weather({"city":"Weather in Paris?","country":"Weather in Paris?","days":3,"hourly":true,"units":"Weather in Paris?"}) = 3 day(s) of sun over "Weather in Paris?"`,
		`answer (`, `, stop): fakellm: get_weather returned 3 day(s) of sun`,
		"refused: 400 model is required\n",
		"openai-compatible chatcmpl-fake-", ": fakellm echo: fakellm: get_weather returned",
		"openai-compatible error 400 invalid_request_error  \n",
	} {
		require.Contains(t, string(want), s)
	}

	fakeAPIGate(t, "ollama", path, ollamaAgent(false), want, "OLLAMA_HOST", "OPENAI_API_KEY")
	fakeAPIMapOrder(t, "ollama-map-order", path, ollamaAgent(true), `["tools"][0]["function"]["parameters"]["required"]`)
}
