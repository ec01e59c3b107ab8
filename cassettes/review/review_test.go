package review_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/internal/fakellm"
)

const testKey = "sk-ant-review-test-key-0123456789"

// call is one request of the test pipeline.
type call struct {
	prompt    string
	maxTokens int
	stream    bool
}

func (c call) body() string {
	b, _ := json.Marshal(map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": c.maxTokens, "stream": c.stream,
		"messages": []map[string]any{{"role": "user", "content": c.prompt}},
	})
	return string(b)
}

// record runs the test pipeline (one Messages request per call, in order)
// through a recording cassette at path.
func record(t testing.TB, path string, rt http.RoundTripper, calls []call) {
	t.Helper()
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: rt, APIKey: testKey})
	require.NoError(t, err)
	for _, cl := range calls {
		req, err := http.NewRequest("POST", "https://api.anthropic.com/v1/messages", strings.NewReader(cl.body()))
		require.NoError(t, err)
		req.Header.Set("X-Api-Key", testKey)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Client().Do(req)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	require.NoError(t, c.Close())
}

// drift stands for the API changing between two recordings: it rewrites
// the fake's answers. answers replaces text in bodies; field adds a field
// to the message of every response whose request contains its key.
type drift struct {
	next    http.RoundTripper
	answers map[string]string // old text -> new text
	field   string            // request substring -> add "service_tier" to the message
}

func (d drift) RoundTrip(req *http.Request) (*http.Response, error) {
	reqBody, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	resp, err := d.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	s := string(body)
	for from, to := range d.answers {
		s = strings.ReplaceAll(s, from, to)
	}
	if d.field != "" && strings.Contains(string(reqBody), d.field) {
		s = addServiceTier(s)
	}
	resp.Body = io.NopCloser(strings.NewReader(s))
	resp.ContentLength = int64(len(s))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// addServiceTier adds "service_tier" to the message_start event's message
// of a stream: a field the old recording did not have.
func addServiceTier(s string) string {
	var out []string
	for line := range strings.Lines(s) {
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"message_start"`) {
			var ev map[string]any
			if json.Unmarshal([]byte(data), &ev) == nil {
				ev["message"].(map[string]any)["service_tier"] = "standard"
				b, _ := json.Marshal(ev)
				line = "data: " + string(b) + "\n"
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "")
}

// refresh records calls into a staging folder of dir through rt.
func refresh(t testing.TB, dir string, files map[string][]call, rt map[string]http.RoundTripper) string {
	t.Helper()
	stage, err := cassettes.NewStage(dir)
	require.NoError(t, err)
	for name, calls := range files {
		record(t, filepath.Join(stage, name), rt[name], calls)
	}
	return stage
}

// apply records and applies, as a first refresh does.
func apply(t testing.TB, dir string, files map[string][]call, rt map[string]http.RoundTripper) {
	t.Helper()
	stage := refresh(t, dir, files, rt)
	var ups []cassettes.Update
	for name := range files {
		ups = append(ups, cassettes.Update{File: name, Staged: filepath.Join(stage, name)})
	}
	err := cassettes.Apply(dir, ups, "2025-01-01T00:00:00Z")
	require.NoError(t, err)
}

func TestReviewClassifiesARefresh(t *testing.T) {
	dir := t.TempDir()
	fake := fakellm.New(fakellm.Config{APIKey: testKey}).Transport()
	failing := fakellm.New(fakellm.Config{APIKey: testKey, Mode: fakellm.HTTPError, Status: 529}).Transport()

	oldCalls := []call{
		{prompt: "alpha", maxTokens: 100},               // its answer changes
		{prompt: "beta", maxTokens: 100},                // a request field changes
		{prompt: "gamma", maxTokens: 100, stream: true}, // the API adds a response field
		{prompt: "epsilon", maxTokens: 100},             // nothing changes
	}
	newCalls := []call{
		{prompt: "alpha", maxTokens: 100},
		{prompt: "beta", maxTokens: 200},
		{prompt: "gamma", maxTokens: 100, stream: true},
		{prompt: "epsilon", maxTokens: 100},
		{prompt: "delta", maxTokens: 100}, // a new interaction
	}
	errCalls := []call{{prompt: "zeta", maxTokens: 100}}
	apply(t, dir, map[string][]call{"chat.yaml": oldCalls, "errors.yaml": errCalls},
		map[string]http.RoundTripper{"chat.yaml": fake, "errors.yaml": fake})

	oldDigest, err := cassettes.Digest(filepath.Join(dir, "chat.yaml"))
	require.NoError(t, err)
	goldens := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(goldens, "pinned.json"), []byte(`{"cassette_id":"`+oldDigest+`"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(goldens, "other.json"), []byte(`{"cassette_id":"0000"}`), 0o644))

	stage := refresh(t, dir, map[string][]call{"chat.yaml": newCalls, "errors.yaml": errCalls, "fresh.yaml": {{prompt: "eta", maxTokens: 100}}},
		map[string]http.RoundTripper{
			"chat.yaml":   drift{next: fake, answers: map[string]string{"fakellm echo: alpha": "fakellm echo: the alpha answer, revised"}, field: "gamma"},
			"errors.yaml": failing,
			"fresh.yaml":  fake,
		})

	rev, err := review.Config{Goldens: []string{goldens}, GoldenCommand: "make goldens"}.Compare(t.Context(), dir, stage)
	require.NoError(t, err)
	var js bytes.Buffer
	require.NoError(t, rev.WriteJSON(&js))

	// The assertions read the JSON form.
	var got struct {
		Format    string `json:"format"`
		Drifted   bool   `json:"drifted"`
		Counts    map[string]int
		Cassettes []struct {
			File, Drift  string
			OldDigest    string `json:"old_digest"`
			Interactions []struct {
				Change, Drift string
				Why           []string
				RequestDiff   []string `json:"request_diff"`
				Before, After *struct {
					Text     string
					Streamed bool
					Usage    struct{ Input, Output int64 }
				}
				TextDiff []review.Span `json:"text_diff"`
			}
		}
		Goldens []review.Golden
		Command string `json:"golden_command"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &got))
	require.Equal(t, review.Format, got.Format)
	require.True(t, got.Drifted)
	require.Len(t, got.Cassettes, 3)

	chat := got.Cassettes[0]
	require.Equal(t, "chat.yaml", chat.File)
	require.Equal(t, "schema", chat.Drift)
	require.Len(t, chat.Interactions, 5)
	// A recording saves its interactions sorted by request, so each is
	// found by the prompt its answer echoes, not by its position.
	byPrompt := map[string]int{}
	for i, in := range chat.Interactions {
		for _, p := range []string{"alpha", "beta", "gamma", "epsilon", "delta"} {
			if in.After != nil && strings.Contains(in.After.Text, p) {
				byPrompt[p] = i
			}
		}
	}
	require.Len(t, byPrompt, 5, "every prompt's interaction is found once")

	answer := chat.Interactions[byPrompt["alpha"]]
	require.Equal(t, "content", answer.Drift, "a changed answer")
	require.Equal(t, "changed", answer.Change)
	require.Empty(t, answer.RequestDiff)
	require.Equal(t, "fakellm echo: the alpha answer, revised", answer.After.Text)
	require.Equal(t, []review.Span{{Op: "=", Text: "fakellm echo: "}, {Op: "+", Text: "the "}, {Op: "=", Text: "alpha"}, {Op: "+", Text: " answer, revised"}}, answer.TextDiff)

	field := chat.Interactions[byPrompt["beta"]]
	require.Equal(t, "content", field.Drift, "a changed request field")
	require.Equal(t, []string{`["max_tokens"]: 100 != 200`}, field.RequestDiff)
	require.Empty(t, field.TextDiff, "the answer did not change")

	schema := chat.Interactions[byPrompt["gamma"]]
	require.Equal(t, "schema", schema.Drift, "a new response field")
	require.Equal(t, []string{`response field added: message_start:["message"]["service_tier"] (string)`}, schema.Why)
	require.True(t, schema.After.Streamed)
	require.Equal(t, "fakellm echo: gamma", schema.After.Text, "the stream is folded into the message")
	require.Positive(t, schema.After.Usage.Output)

	require.Equal(t, "unchanged", chat.Interactions[byPrompt["epsilon"]].Drift)

	added := chat.Interactions[byPrompt["delta"]]
	require.Equal(t, "new", added.Drift, "a new interaction")
	require.Equal(t, "added", added.Change)
	require.Nil(t, added.Before)

	errs := got.Cassettes[1]
	require.Equal(t, "errors.yaml", errs.File)
	require.Equal(t, "error", errs.Drift)
	require.Contains(t, errs.Interactions[0].Why, "status 200 -> 529")

	fresh := got.Cassettes[2]
	require.Equal(t, "fresh.yaml", fresh.File)
	require.Empty(t, fresh.OldDigest)
	require.Equal(t, "new", fresh.Drift)

	require.Equal(t, map[string]int{"unchanged": 1, "timing": 0, "content": 2, "new": 2, "removed": 0, "schema": 1, "error": 1}, got.Counts)
	require.Equal(t, []review.Golden{{Path: filepath.ToSlash(filepath.Join(goldens, "pinned.json")), Cassettes: []string{"chat.yaml"}}}, got.Goldens)
	require.Equal(t, "make goldens", got.Command)

	// The Markdown form renders the same value.
	var md bytes.Buffer
	require.NoError(t, rev.Markdown(&md))
	require.Contains(t, md.String(), "fakellm echo: {+the +}alpha{+ answer, revised+}")
	// It leads with what to look at, the most severe first.
	lead, _, ok := strings.Cut(md.String(), "\n3 cassettes, ")
	require.True(t, ok, md.String())
	order := []string{"**Look at first:**", "error: `status 200 -> 529`", "schema: `response field added:",
		"a new request", "the answer's text changed", "the request changed: `[\"max_tokens\"]: 100 != 200`"}
	at := -1
	for _, w := range order {
		i := strings.Index(lead, w)
		require.Greater(t, i, at, "%q is not after %q in the lead:\n%s", w, order, lead)
		at = i
	}
	require.Contains(t, md.String(), "make goldens")
	require.NotContains(t, md.String(), testKey)
	require.NotContains(t, js.String(), testKey)
}
