package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeCassette writes a go-vcr cassette by hand with one Messages
// interaction per answer: a file no recorder would write (recorders
// refuse secrets), as a cassette from elsewhere may be.
func writeCassette(t *testing.T, path string, answers ...string) {
	t.Helper()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var b strings.Builder
	b.WriteString("---\nversion: 2\ninteractions:\n")
	for i, a := range answers {
		body, _ := json.Marshal(map[string]any{"type": "message", "model": "claude-sonnet-4-5",
			"content": []any{map[string]any{"type": "text", "text": a}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 3, "output_tokens": 4}})
		fmt.Fprintf(&b, "- id: %d\n  request:\n    body: %s\n    headers:\n      Content-Type: [application/json]\n    url: https://api.anthropic.com/v1/messages\n    method: POST\n", i, q(fmt.Sprintf(`{"n":%d}`, i)))
		fmt.Fprintf(&b, "  response:\n    body: %s\n    headers:\n      Content-Type: [application/json]\n    status: 200 OK\n    code: 200\n", q(string(body)))
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

func TestReviewMasksSecrets(t *testing.T) {
	dir := t.TempDir()
	stage := filepath.Join(dir, "stage")
	require.NoError(t, os.Mkdir(stage, 0o755))
	secret := "sk-ant-api03-" + strings.Repeat("Q8wE3rT6yU", 9) + "AA"
	writeCassette(t, filepath.Join(dir, "c.yaml"), "use the key "+secret[:20]+"x please")
	writeCassette(t, filepath.Join(stage, "c.yaml"), "use the key "+secret+" please")
	rev, err := Compare(t.Context(), dir, stage)
	require.NoError(t, err)
	var js, md bytes.Buffer
	require.NoError(t, rev.WriteJSON(&js))
	require.NoError(t, rev.Markdown(&md))
	for _, out := range []string{js.String(), md.String()} {
		require.NotContains(t, out, secret[13:40])
		require.Contains(t, out, "REDACTED")
	}
}

func TestMarkdownIsBounded(t *testing.T) {
	dir := t.TempDir()
	stage := filepath.Join(dir, "stage")
	require.NoError(t, os.Mkdir(stage, 0o755))
	var olds, news []string
	for i := range 300 {
		olds = append(olds, strings.Repeat(fmt.Sprintf("old answer %d ", i), 40))
		news = append(news, strings.Repeat(fmt.Sprintf("new answer %d ", i), 40)+"```")
	}
	writeCassette(t, filepath.Join(dir, "c.yaml"), olds...)
	writeCassette(t, filepath.Join(stage, "c.yaml"), news...)
	for _, limit := range []int{0, 8000} {
		rev, err := Config{MaxMarkdown: limit}.Compare(t.Context(), dir, stage)
		require.NoError(t, err)
		var md bytes.Buffer
		require.NoError(t, rev.Markdown(&md))
		if limit == 0 {
			limit = defaultMaxMarkdown
		}
		require.LessOrEqual(t, md.Len(), limit)
		require.Contains(t, md.String(), "more drifted interactions are not shown here")
		require.Contains(t, md.String(), "````\n", "a fence longer than the backticks in the answers")
		require.Equal(t, 300, rev.Counts[Content])
	}
}

func TestFenceAndCode(t *testing.T) {
	require.Equal(t, "````\na ``` b\n````\n", fence("a ``` b", ""))
	require.Equal(t, "```\n\\u{001b}[31mred\n```\n", fence("\x1b[31mred", ""))
	require.Equal(t, "``a`b``", code("a`b"))
	require.Equal(t, "`` `a ``", code("`a"))
	require.Equal(t, "`x`", code("x"))
	require.Equal(t, "`"+`"a\nb"`+"`", code("a\nb"))
}
