package promptparse_test

import (
	"cmp"
	"strings"
	"testing"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/internal/promptparse"
	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := prompttest.Input().Draw(t, "input")
		p := prompttest.Build(t, in)
		want, err := prompt.Builder{}.Canonical(in)
		require.NoError(t, err)
		got, err := promptparse.Parse(p.User)
		require.NoError(t, err)
		if diff := pretty.Diff(want, got); len(diff) > 0 {
			t.Fatalf("Parse(Build(x)) != Canonical(x):\n%s", strings.Join(diff, "\n"))
		}
		again := prompttest.Build(t, got)
		require.Equal(t, p.User, again.User, "Build(Parse(u)) != u")
	})
}

// Inputs beyond the default limits are still the format: Parse reads what
// a Builder with larger limits wrote.
func TestParseIgnoresLimits(t *testing.T) {
	in := prompttest.Small()
	in.Files[0].Content = make([]byte, prompt.DefaultMaxTotalBytes+1)
	b := prompt.Builder{Limits: prompt.Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 1 << 20}}
	p, err := b.Build(in)
	require.NoError(t, err)
	got, err := promptparse.Parse(p.User)
	require.NoError(t, err)
	want, err := b.Canonical(in)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestPrefixesDoNotParse(t *testing.T) {
	in := prompttest.Small()
	in.Examples = []prompt.Example{{ID: "e", Fix: "--- a/x\n+++ b/x\n", Score: 0.5}}
	in.Attempts = []prompt.AttemptSummary{{Attempt: 2, Error: "x"}}
	u := prompttest.Build(t, in).User
	lines := strings.Count(u, "\n")
	for i := range len(u) {
		_, err := promptparse.Parse(u[:i])
		require.ErrorIs(t, err, promptparse.ErrMalformed, "prefix of %d bytes parsed", i)
		var pe *promptparse.Error
		require.ErrorAs(t, err, &pe)
		require.True(t, pe.Line >= 1 && pe.Line <= lines+1, "line %d outside the text", pe.Line)
	}
}

func TestBinaryContentRoundTrip(t *testing.T) {
	in := prompttest.Small()
	in.Files = append(in.Files, prompt.File{Path: "logo.png", Content: []byte("\x89PNG\r\n\x1a\n\x00\x00")})
	got, err := promptparse.Parse(prompttest.Build(t, in).User)
	require.NoError(t, err)
	require.Equal(t, in.Files[1].Content, got.Files[0].Content)
}

// lineOf returns the 1-based line of the first occurrence of s in u.
func lineOf(u, s string) int {
	return strings.Count(u[:strings.Index(u, s)], "\n") + 1
}

func TestParseRejectsNonCanonical(t *testing.T) {
	in := prompttest.Small()
	in.Recipe.Params = map[string]string{"a": "1", "b": "2"}
	in.Files = append(in.Files, prompt.File{Path: "go.mod", Content: []byte("module x\n")})
	in.Examples = []prompt.Example{{ID: "e", Fix: "--- a/x\n+++ b/x\n", Score: 0.5}}
	in.Attempts = []prompt.AttemptSummary{{Attempt: 2, Error: "x"}}
	u := prompttest.Build(t, in).User
	_, err := promptparse.Parse(u)
	require.NoError(t, err)
	tests := []struct {
		name, old, new string
		at             string // the error names the line where this first occurs in the bad text; default new
		err            error  // a prompt sentinel the error wraps besides ErrMalformed, or nil
	}{
		{name: "long fence", old: "```text bytes=9\nmodule x\n```\n", new: "````text bytes=9\nmodule x\n````\n"},
		{name: "wrong byte count", old: "```text bytes=9\n", new: "```text bytes=8\n", at: "module x"},
		{name: "leading zero count", old: "```text bytes=9\n", new: "```text bytes=09\n"},
		{name: "missing noeol", old: "```text bytes=27 noeol", new: "```text bytes=27", at: "Command injection in lodash\n"},
		{name: "unsorted params", old: "- param \"a\": \"1\"\n- param \"b\": \"2\"\n", new: "- param \"b\": \"2\"\n- param \"a\": \"1\"\n"},
		{name: "repeated param", old: "- param \"a\": \"1\"\n", new: "- param \"a\": \"1\"\n- param \"a\": \"1\"\n", at: "- param \"a\": \"1\"\n- param \"b\""},
		{name: "unsorted files", old: "## File \"go.mod\"", new: "## File \"zz\"", at: "## File \"package.json\""},
		{name: "repeated file", old: "## File \"package.json\"", new: "## File \"go.mod\"", at: "## File \"go.mod\"\n```text bytes=52"},
		{name: "unquoted field", old: "- package: \"lodash\"", new: "- package: lodash"},
		{name: "non-canonical quote", old: "- package: \"lodash\"", new: "- package: \"\\x6codash\""},
		{name: "raw string quote", old: "- package: \"lodash\"", new: "- package: `lodash`"},
		{name: "file count", old: "# Repository files (2)", new: "# Repository files (3)", at: "# Solved examples"},
		{name: "score digits", old: "- score: 0.5000", new: "- score: 0.50000"},
		{name: "score not a number", old: "- score: 0.5000", new: "- score: half"},
		{name: "text block holding base64 content", old: "```text bytes=9\nmodule x\n", new: "```base64 bytes=13\nbW9kdWxlIHgK\n"},
		{name: "trailing text", old: "Nothing else in the reply is read.\n", new: "Nothing else in the reply is read.\nmore\n", at: "more\n"},
		{name: "wrong lang", old: "```text bytes=9\n", new: "```go bytes=9\n"},
		{name: "absolute path", old: "## File \"go.mod\"", new: "## File \"/go.mod\"", err: prompt.ErrInvalidPath},
		{name: "attempt zero", old: "## Attempt 2", new: "## Attempt 0", err: prompt.ErrInvalidAttempt},
		{name: "blank advisory id", old: "- id: \"GHSA-35jh-r3h4-6jhm\"", new: "- id: \" \"", err: prompt.ErrEmptyAdvisory},
		{name: "score too large", old: "- score: 0.5000", new: "- score: 10000000.0000", err: prompt.ErrInvalidScore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(u, tt.old), "test setup: %q must occur once", tt.old)
			bad := strings.Replace(u, tt.old, tt.new, 1)
			_, err := promptparse.Parse(bad)
			require.ErrorIs(t, err, promptparse.ErrMalformed)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
			}
			var pe *promptparse.Error
			require.ErrorAs(t, err, &pe)
			at := cmp.Or(tt.at, tt.new)
			require.Equal(t, lineOf(bad, at), pe.Line, "%v", err)
			require.True(t, strings.HasPrefix(err.Error(), "promptparse: line "), "%v", err)
		})
	}
}
