package fakellm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/prompt"
)

// tb is the part of testing.TB that helpers shared with rapid properties
// use (*rapid.T is not a testing.TB).
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

// applyDiff applies a unified diff to files and returns the new contents
// by path. It fails the test when the diff does not parse.
func applyDiff(t tb, diff []byte, files map[string]string) (map[string]string, error) {
	t.Helper()
	parsed, _, err := gitdiff.Parse(bytes.NewReader(diff))
	require.NoError(t, err, "diff does not parse:\n%s", diff)
	require.NotEmpty(t, parsed, "diff has no files:\n%s", diff)
	out := map[string]string{}
	for k, v := range files {
		out[k] = v
	}
	for _, f := range parsed {
		require.Equal(t, f.OldName, f.NewName)
		src, ok := files[f.OldName]
		require.True(t, ok, "diff touches unknown file %q", f.OldName)
		var dst bytes.Buffer
		if err := gitdiff.Apply(&dst, strings.NewReader(src), f); err != nil {
			return nil, err
		}
		out[f.NewName] = dst.String()
	}
	return out, nil
}

// gitApplyCheck runs `git apply --check` on diff against files in a temp
// directory, when git is installed.
func gitApplyCheck(t testing.TB, diff []byte, files map[string]string) {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Log("git not installed; applied with go-gitdiff only")
		return
	}
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	cmd := exec.Command(git, "apply", "--check", "-")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(diff)
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git apply --check: %s\n%s", out, diff)
}

// buildPrompt renders a prompt the way the pipeline does.
func buildPrompt(t tb, adv prompt.Advisory, files map[string]string, attempts ...prompt.AttemptSummary) prompt.Prompt {
	t.Helper()
	in := prompt.Input{Advisory: adv, Recipe: prompt.RecipeSelection{Recipe: "bump-dependency"}, Attempts: attempts}
	for p, c := range files {
		in.Files = append(in.Files, prompt.File{Path: p, Content: []byte(c)})
	}
	p, err := prompt.Builder{}.Build(in)
	require.NoError(t, err)
	return p
}

const packageJSON = `{
  "name": "web",
  "version": "1.0.0",
  "dependencies": {
    "express": "^4.18.2",
    "lodash": "^4.17.20"
  },
  "devDependencies": {
    "jest": "~29.7.0"
  }
}
`

const goMod = `module example.com/svc

go 1.22

require github.com/gin-gonic/gin v1.9.0

require (
	golang.org/x/net v0.17.0 // indirect
	golang.org/x/text v0.13.0
)

replace golang.org/x/text => golang.org/x/text v0.3.0
`

const requirements = "# pinned deps\r\nDjango==3.2.1  # web\r\nrequests[security] == 2.25.0 ; python_version >= \"3.8\"\r\nPyYAML==5.3\r\n"

func TestBump(t *testing.T) {
	tests := []struct {
		name  string
		adv   prompt.Advisory
		files map[string]string
		want  map[string]string // changed files, new content
	}{
		{
			name:  "npm caret kept",
			adv:   prompt.Advisory{ID: "GHSA-35jh-r3h4-6jhm", Summary: "proto pollution", Ecosystem: "npm", Package: "lodash", FixedVersion: "4.17.21"},
			files: map[string]string{"package.json": packageJSON, "index.js": "require('lodash')\n"},
			want:  map[string]string{"package.json": strings.Replace(packageJSON, `"lodash": "^4.17.20"`, `"lodash": "^4.17.21"`, 1)},
		},
		{
			name:  "npm tilde kept in nested manifest",
			adv:   prompt.Advisory{ID: "GHSA-x", Summary: "s", Ecosystem: "npm", Package: "jest", FixedVersion: "29.7.1"},
			files: map[string]string{"web/package.json": packageJSON},
			want:  map[string]string{"web/package.json": strings.Replace(packageJSON, `"jest": "~29.7.0"`, `"jest": "~29.7.1"`, 1)},
		},
		{
			name:  "go single require",
			adv:   prompt.Advisory{ID: "GO-2023-1", Summary: "s", Ecosystem: "Go", Package: "github.com/gin-gonic/gin", FixedVersion: "1.9.1"},
			files: map[string]string{"go.mod": goMod, "main.go": "package main\n"},
			want:  map[string]string{"go.mod": strings.Replace(goMod, "gin v1.9.0", "gin v1.9.1", 1)},
		},
		{
			name:  "go block indirect kept",
			adv:   prompt.Advisory{ID: "GO-2023-2", Summary: "s", Ecosystem: "Go", Package: "golang.org/x/net", FixedVersion: "v0.23.0"},
			files: map[string]string{"go.mod": goMod},
			want:  map[string]string{"go.mod": strings.Replace(goMod, "net v0.17.0 // indirect", "net v0.23.0 // indirect", 1)},
		},
		{
			name:  "go replace left alone",
			adv:   prompt.Advisory{ID: "GO-2023-3", Summary: "s", Ecosystem: "Go", Package: "golang.org/x/text", FixedVersion: "0.14.0"},
			files: map[string]string{"go.mod": goMod},
			want:  map[string]string{"go.mod": strings.Replace(goMod, "\tgolang.org/x/text v0.13.0\n", "\tgolang.org/x/text v0.14.0\n", 1)},
		},
		{
			name:  "pypi case-insensitive with CRLF",
			adv:   prompt.Advisory{ID: "PYSEC-1", Summary: "s", Ecosystem: "PyPI", Package: "django", FixedVersion: "3.2.25"},
			files: map[string]string{"requirements.txt": requirements},
			want:  map[string]string{"requirements.txt": strings.Replace(requirements, "Django==3.2.1  # web", "Django==3.2.25  # web", 1)},
		},
		{
			name:  "pypi extras and marker kept",
			adv:   prompt.Advisory{ID: "PYSEC-2", Summary: "s", Ecosystem: "PyPI", Package: "Requests", FixedVersion: "2.31.0"},
			files: map[string]string{"requirements-dev.txt": requirements},
			want:  map[string]string{"requirements-dev.txt": strings.Replace(requirements, "== 2.25.0 ;", "== 2.31.0 ;", 1)},
		},
		{
			name:  "pypi normalised name",
			adv:   prompt.Advisory{ID: "PYSEC-3", Summary: "s", Ecosystem: "pypi", Package: "pyyaml", FixedVersion: "5.4"},
			files: map[string]string{"requirements.txt": requirements},
			want:  map[string]string{"requirements.txt": strings.Replace(requirements, "PyYAML==5.3", "PyYAML==5.4", 1)},
		},
		{
			name: "two manifests in path order",
			adv:  prompt.Advisory{ID: "GHSA-y", Summary: "s", Ecosystem: "npm", Package: "express", FixedVersion: "4.19.2"},
			files: map[string]string{
				"b/package.json": packageJSON,
				"a/package.json": packageJSON,
			},
			want: map[string]string{
				"a/package.json": strings.Replace(packageJSON, `"express": "^4.18.2"`, `"express": "^4.19.2"`, 1),
				"b/package.json": strings.Replace(packageJSON, `"express": "^4.18.2"`, `"express": "^4.19.2"`, 1),
			},
		},
	}
	s := New(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := buildPrompt(t, tt.adv, tt.files)
			rep := s.answer(p.User)
			require.Equal(t, http.StatusOK, rep.status)
			require.Equal(t, Normal, rep.mode, rep.text)
			diff, err := prompt.ParseAnswer(rep.text)
			require.NoError(t, err, rep.text)
			got, err := applyDiff(t, diff, tt.files)
			require.NoError(t, err, "diff does not apply:\n%s", diff)
			for path, content := range tt.files {
				want, changed := tt.want[path]
				if !changed {
					want = content
				}
				require.Equal(t, want, got[path], "file %s after applying:\n%s", path, diff)
			}
			require.True(t, bytes.HasPrefix(diff, []byte("diff --git a/")), "git-style header:\n%s", diff)
			gitApplyCheck(t, diff, tt.files)
			// Deterministic: the same prompt gives the same bytes.
			require.Equal(t, rep, s.answer(p.User))
		})
	}
}

func TestBumpNothingToDo(t *testing.T) {
	tests := []struct {
		name  string
		adv   prompt.Advisory
		files map[string]string
	}{
		{"package absent", prompt.Advisory{ID: "A", Summary: "s", Ecosystem: "npm", Package: "left-pad", FixedVersion: "1.3.0"}, map[string]string{"package.json": packageJSON}},
		{"already fixed", prompt.Advisory{ID: "A", Summary: "s", Ecosystem: "npm", Package: "lodash", FixedVersion: "4.17.20"}, map[string]string{"package.json": packageJSON}},
		{"wrong ecosystem", prompt.Advisory{ID: "A", Summary: "s", Ecosystem: "PyPI", Package: "lodash", FixedVersion: "4.17.21"}, map[string]string{"package.json": packageJSON}},
		{"range spec", prompt.Advisory{ID: "A", Summary: "s", Ecosystem: "npm", Package: "lodash", FixedVersion: "4.17.21"}, map[string]string{"package.json": `{"dependencies": {"lodash": ">=4 <5"}}` + "\n"}},
		{"no fixed version", prompt.Advisory{ID: "A", Summary: "s", Ecosystem: "npm", Package: "lodash"}, map[string]string{"package.json": packageJSON}},
	}
	s := New(Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := s.answer(buildPrompt(t, tt.adv, tt.files).User)
			require.Equal(t, NoDiff, rep.mode)
			_, err := prompt.ParseAnswer(rep.text)
			require.ErrorIs(t, err, prompt.ErrNoDiff)
		})
	}
}

func TestModes(t *testing.T) {
	files := map[string]string{"package.json": packageJSON}
	adv := func(id string) prompt.Advisory {
		return prompt.Advisory{ID: id, Summary: "s", Ecosystem: "npm", Package: "lodash", FixedVersion: "4.17.21"}
	}
	retry := prompt.AttemptSummary{Attempt: 1, Recipe: "bump-dependency", Outcome: "build-failed", Error: "boom"}
	tests := []struct {
		name     string
		cfg      Config
		id       string
		attempts []prompt.AttemptSummary
		status   int
		check    func(t *testing.T, text string)
	}{
		{name: "garbage by config", cfg: Config{Mode: Garbage}, id: "GHSA-1", status: 200, check: wantAnswerErr(prompt.ErrMalformedAnswer)},
		{name: "garbage by marker", id: "GHSA-1-fakellm-garbage", status: 200, check: wantAnswerErr(prompt.ErrMalformedAnswer)},
		{name: "nodiff by marker", id: "FAKELLM-NODIFF", status: 200, check: wantAnswerErr(prompt.ErrNoDiff)},
		{name: "nodiff by config", cfg: Config{Mode: NoDiff}, id: "X", status: 200, check: wantAnswerErr(prompt.ErrNoDiff)},
		{name: "nonapplying", id: "FAKELLM-NONAPPLYING", status: 200, check: func(t *testing.T, text string) {
			diff, err := prompt.ParseAnswer(text)
			require.NoError(t, err)
			_, err = applyDiff(t, diff, files)
			require.ErrorIs(t, err, &gitdiff.Conflict{})
		}},
		{name: "empty", id: "FAKELLM-EMPTY", status: 200, check: func(t *testing.T, text string) { require.Empty(t, text) }},
		{name: "http marker status", id: "FAKELLM-HTTP-503", status: 503},
		{name: "http marker default status", cfg: Config{Status: 502}, id: "FAKELLM-HTTP-", status: 502},
		{name: "http config", cfg: Config{Mode: HTTPError}, id: "X", status: 500},
		{name: "marker beats config", cfg: Config{Mode: HTTPError}, id: "FAKELLM-NODIFF", status: 200, check: wantAnswerErr(prompt.ErrNoDiff)},
		{name: "failfirst first", id: "FAKELLM-FAILFIRST", status: 200, check: wantAnswerErr(prompt.ErrMalformedAnswer)},
		{name: "failfirst retry", id: "FAKELLM-FAILFIRST", attempts: []prompt.AttemptSummary{retry}, status: 200, check: wantApplies(files)},
		{name: "normal", id: "GHSA-ok", status: 200, check: wantApplies(files)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := New(tt.cfg).answer(buildPrompt(t, adv(tt.id), files, tt.attempts...).User)
			require.Equal(t, tt.status, rep.status, rep.text)
			if tt.check != nil {
				tt.check(t, rep.text)
			}
		})
	}
}

func wantAnswerErr(sentinel error) func(*testing.T, string) {
	return func(t *testing.T, text string) {
		_, err := prompt.ParseAnswer(text)
		require.ErrorIs(t, err, sentinel, text)
	}
}

func wantApplies(files map[string]string) func(*testing.T, string) {
	return func(t *testing.T, text string) {
		diff, err := prompt.ParseAnswer(text)
		require.NoError(t, err, text)
		_, err = applyDiff(t, diff, files)
		require.NoError(t, err)
	}
}

func TestModeString(t *testing.T) {
	require.Equal(t, "nonapplying", NonApplying.String())
	require.Equal(t, "mode(99)", Mode(99).String())
}

// post sends body to path through the in-process transport.
func post(t testing.TB, s *Server, path, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://fake.invalid"+path, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{Transport: s.Transport()}).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

func readAll(t testing.TB, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(b)
}

func TestMessagesJSONWire(t *testing.T) {
	s := New(Config{})
	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":100,"system":"sys","messages":[{"role":"user","content":"hi"}]}`, nil)
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(readAll(t, res.Body)), &got))
	id := got["id"].(string)
	require.True(t, strings.HasPrefix(id, "msg_fake_"))
	require.Equal(t, "req_fake_"+strings.TrimPrefix(id, "msg_fake_"), res.Header.Get("Request-Id"))
	delete(got, "id")
	require.Equal(t, map[string]any{
		"type": "message", "role": "assistant", "model": "m",
		"content":     []any{map[string]any{"type": "text", "text": "fakellm echo: hi"}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 2.0, "output_tokens": 4.0},
	}, got)
}

func TestMessagesStreamWire(t *testing.T) {
	s := New(Config{ChunkSize: 8})
	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"héllo wörld"}]}]}`, nil)
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "text/event-stream; charset=utf-8", res.Header.Get("Content-Type"))
	raw := readAll(t, res.Body)
	require.True(t, strings.HasSuffix(raw, "\n\n"))
	var names []string
	var text strings.Builder
	for _, ev := range strings.Split(strings.TrimSuffix(raw, "\n\n"), "\n\n") {
		lines := strings.Split(ev, "\n")
		require.Len(t, lines, 2, "event %q", ev)
		name, ok := strings.CutPrefix(lines[0], "event: ")
		require.True(t, ok)
		data, ok := strings.CutPrefix(lines[1], "data: ")
		require.True(t, ok)
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &d))
		require.Equal(t, name, d["type"], "event name and data type agree")
		names = append(names, name)
		if name == "content_block_delta" {
			delta := d["delta"].(map[string]any)
			require.Equal(t, "text_delta", delta["type"])
			chunk := delta["text"].(string)
			require.LessOrEqual(t, len(chunk), 8+3, "chunk %q", chunk)
			text.WriteString(chunk)
		}
		if name == "message_delta" {
			require.Equal(t, "end_turn", d["delta"].(map[string]any)["stop_reason"])
		}
	}
	require.Equal(t, "fakellm echo: héllo wörld", text.String())
	require.Equal(t, []string{"message_start", "content_block_start", "ping",
		"content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}, names)
}

func TestMaxTokensTruncates(t *testing.T) {
	s := New(Config{})
	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":"a long prompt"}]}`, nil)
	var got struct {
		Content []struct{ Text string }
		Stop    string `json:"stop_reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(readAll(t, res.Body)), &got))
	require.Equal(t, "max_tokens", got.Stop)
	require.Equal(t, "fakellm ", got.Content[0].Text, "2 tokens are 8 bytes")
}

func TestBadRequests(t *testing.T) {
	tests := []struct {
		name, path, body string
		header           map[string]string
		cfg              Config
		status           int
		errType          string
	}{
		{"messages not json", "/v1/messages", "{", nil, Config{}, 400, "invalid_request_error"},
		{"messages no model", "/v1/messages", `{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, nil, Config{}, 400, "invalid_request_error"},
		{"messages no max_tokens", "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, nil, Config{}, 400, "invalid_request_error"},
		{"messages none", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[]}`, nil, Config{}, 400, "invalid_request_error"},
		{"messages last not user", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":"x"}]}`, nil, Config{}, 400, "invalid_request_error"},
		{"messages bad content", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":7}]}`, nil, Config{}, 400, "invalid_request_error"},
		{"messages bad key", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, map[string]string{"X-Api-Key": "no"}, Config{APIKey: "yes"}, 401, "authentication_error"},
		{"chat no model", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, nil, Config{}, 400, "invalid_request_error"},
		{"chat bad key", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, map[string]string{"Authorization": "Bearer no"}, Config{APIKey: "yes"}, 401, "invalid_api_key"},
		{"embeddings bad input", "/v1/embeddings", `{"model":"e","input":[]}`, nil, Config{}, 400, "invalid_request_error"},
		{"embeddings base64", "/v1/embeddings", `{"model":"e","input":"x","encoding_format":"base64"}`, nil, Config{}, 400, "invalid_request_error"},
		{"embeddings http error", "/v1/embeddings", `{"model":"e","input":"x"}`, nil, Config{Mode: HTTPError, Status: 503}, 503, "server_error"},
		{"unknown path", "/v2/other", `{}`, nil, Config{}, 404, "invalid_request_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := post(t, New(tt.cfg), tt.path, tt.body, tt.header)
			require.Equal(t, tt.status, res.StatusCode)
			body := readAll(t, res.Body)
			require.Contains(t, body, `"type":"`+tt.errType+`"`, body)
		})
	}
	t.Run("method", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, "http://fake.invalid/v1/messages", nil)
		require.NoError(t, err)
		res, err := (&http.Client{Transport: New(Config{}).Transport()}).Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
		require.Equal(t, "POST", res.Header.Get("Allow"))
	})
}

func TestTransportCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake.invalid/v1/messages", strings.NewReader("{}"))
	require.NoError(t, err)
	_, err = New(Config{}).Transport().RoundTrip(req)
	require.ErrorIs(t, err, context.Canceled)
}

func TestEmbeddings(t *testing.T) {
	s := New(Config{EmbeddingDims: 32})
	res := post(t, s, "/v1/embeddings", `{"model":"fake-embed","input":["lodash prototype pollution","Lodash prototype-pollution!","go module bump"]}`, nil)
	require.Equal(t, 200, res.StatusCode)
	var got struct {
		Model string
		Data  []struct {
			Index     int
			Embedding []float64
		}
		Usage struct {
			PromptTokens int64 `json:"prompt_tokens"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(readAll(t, res.Body)), &got))
	require.Equal(t, "fake-embed", got.Model)
	require.Len(t, got.Data, 3)
	for i, d := range got.Data {
		require.Equal(t, i, d.Index)
		require.Len(t, d.Embedding, 32)
		var n float64
		for _, x := range d.Embedding {
			n += float64(x * x)
		}
		require.InDelta(t, 1.0, n, 1e-12)
	}
	require.Equal(t, got.Data[0].Embedding, got.Data[1].Embedding, "same words, same vector")
	require.NotEqual(t, got.Data[0].Embedding, got.Data[2].Embedding)
	require.Equal(t, Embed("go module bump", 32), got.Data[2].Embedding, "the wire carries Embed exactly")

	one := post(t, s, "/v1/embeddings", `{"model":"e","input":"x y","dimensions":8}`, nil)
	require.Contains(t, readAll(t, one.Body), `"index":0`)
	require.Equal(t, make([]float64, 4), Embed("--- !!!", 4), "no words, zero vector")
	require.False(t, math.IsNaN(Embed("a", 1)[0]))
}

func TestNewHTTPTest(t *testing.T) {
	hs, s := NewHTTPTest(t, Config{})
	res, err := hs.Client().Post(hs.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"ping"}]}`))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Contains(t, readAll(t, res.Body), `"content":"fakellm echo: ping"`)
	require.Equal(t, int64(1), s.Calls())
}

// TestConcurrentAnswers serves many real prompts at once, through both the
// transport and a loopback server, and checks each answer is the one a
// lone request gets.
func TestConcurrentAnswers(t *testing.T) {
	s := New(Config{ChunkSize: 7})
	hs := httptest.NewServer(s)
	defer hs.Close()
	ids := []string{"GHSA-a", "FAKELLM-GARBAGE", "FAKELLM-NONAPPLYING", "FAKELLM-HTTP-429"}
	bodies := make([]string, len(ids))
	for i, id := range ids {
		p := buildPrompt(t, prompt.Advisory{ID: id, Summary: "s", Ecosystem: "npm", Package: "lodash", FixedVersion: "4.17.21"}, map[string]string{"package.json": packageJSON})
		b, err := json.Marshal(map[string]any{"model": "m", "max_tokens": 4096, "stream": i%2 == 0,
			"system": p.System, "messages": []any{map[string]any{"role": "user", "content": p.User}}})
		require.NoError(t, err)
		bodies[i] = string(b)
	}
	want := make([]string, len(ids))
	for i := range ids {
		want[i] = readAll(t, post(t, New(Config{ChunkSize: 7}), "/v1/messages", bodies[i], nil).Body)
	}
	clients := []*http.Client{{Transport: s.Transport()}, hs.Client()}
	bases := []string{"http://fake.invalid", hs.URL}
	const rounds = 6
	got := make([]string, rounds*len(ids)*2)
	var wg sync.WaitGroup
	for k := range got {
		wg.Go(func() {
			c := k % 2
			i := (k / 2) % len(ids)
			res, err := clients[c].Post(bases[c]+"/v1/messages", "application/json", strings.NewReader(bodies[i]))
			if err != nil {
				got[k] = err.Error()
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			got[k] = string(b)
		})
	}
	wg.Wait()
	for k := range got {
		require.Equal(t, want[(k/2)%len(ids)], got[k], "request %d", k)
	}
}
