package prompt_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

func TestOrderIndependence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := prompttest.Input().Draw(t, "input")
		want := prompttest.Build(t, in)

		shuffled := in
		shuffled.Files = rapid.Permutation(in.Files).Draw(t, "files order")
		shuffled.Examples = rapid.Permutation(in.Examples).Draw(t, "examples order")
		shuffled.Attempts = rapid.Permutation(in.Attempts).Draw(t, "attempts order")
		if in.Recipe.Params != nil {
			keys := make([]string, 0, len(in.Recipe.Params))
			for k := range in.Recipe.Params {
				keys = append(keys, k)
			}
			keys = rapid.Permutation(keys).Draw(t, "param insertion order")
			m := make(map[string]string, len(keys))
			for _, k := range keys {
				m[k] = in.Recipe.Params[k]
			}
			shuffled.Recipe.Params = m
		}
		got := prompttest.Build(t, shuffled)
		require.Equal(t, want, got)
	})
}

func TestBuildIsStableAndDoesNotMutate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := prompttest.Input().Draw(t, "input")
		paths := make([]string, len(in.Files))
		for i, f := range in.Files {
			paths[i] = f.Path
		}
		first := prompttest.Build(t, in)
		second := prompttest.Build(t, in)
		require.Equal(t, first, second)
		for i, f := range in.Files {
			require.Equal(t, paths[i], f.Path, "Build reordered the caller's Files")
		}
	})
}

func TestRetrySection(t *testing.T) {
	in := exampleInput()
	p := prompttest.Build(t, in)
	require.NotContains(t, p.User, "# Previous attempts")
	in.Attempts = []prompt.AttemptSummary{
		{Attempt: 2, Recipe: "bump-dependency", Outcome: "tests-failed", Error: "second"},
		{Attempt: 1, Recipe: "bump-dependency", Outcome: "build-failed", Error: "first"},
	}
	p = prompttest.Build(t, in)
	require.Contains(t, p.User, "# Previous attempts (2)\n")
	require.Contains(t, p.User, "Do not repeat them")
	require.Less(t, strings.Index(p.User, "## Attempt 1"), strings.Index(p.User, "## Attempt 2"))
	require.Contains(t, p.System, "Do not repeat them")
}

func TestSystemStatesAnswerFormat(t *testing.T) {
	p := prompttest.Build(t, exampleInput())
	require.Contains(t, p.System, "```diff\n")
	require.Contains(t, p.System, "a/ on the --- line and b/ on the +++ line")
	require.True(t, utf8.ValidString(p.System))
	// The example answer inside the System text is itself a valid answer.
	d, err := prompt.ParseAnswer(p.System)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(d), "diff --git a/path/to/file b/path/to/file\n"))
}

func TestExamplesRankOrder(t *testing.T) {
	in := exampleInput()
	in.Examples = []prompt.Example{
		{ID: "c", Score: 0.5},
		{ID: "b", Score: 0.91234}, // rounds to 0.9123, ties with "a" on the rendered score
		{ID: "a", Score: 0.91226},
		{ID: "d", Score: 0.99},
	}
	c, err := prompt.Builder{}.Canonical(in)
	require.NoError(t, err)
	var ids []string
	for _, e := range c.Examples {
		ids = append(ids, e.ID)
	}
	require.Equal(t, []string{"d", "a", "b", "c"}, ids)
	require.Equal(t, 0.9123, c.Examples[1].Score)
}

func TestBadInput(t *testing.T) {
	big := make([]byte, prompt.DefaultMaxFileBytes+1)
	exact := make([]byte, prompt.DefaultMaxFileBytes)
	tests := []struct {
		name   string
		limits prompt.Limits
		edit   func(in *prompt.Input)
		err    error
		field  string
		path   string
	}{
		{name: "zero advisory", edit: func(in *prompt.Input) { in.Advisory = prompt.Advisory{} }, err: prompt.ErrEmptyAdvisory, field: "Advisory.ID"},
		{name: "blank id", edit: func(in *prompt.Input) { in.Advisory.ID = " \n" }, err: prompt.ErrEmptyAdvisory, field: "Advisory.ID"},
		{name: "no summary or details", edit: func(in *prompt.Input) { in.Advisory.Summary, in.Advisory.Details = "", " " }, err: prompt.ErrEmptyAdvisory, field: "Advisory.Summary"},
		{name: "no files", edit: func(in *prompt.Input) { in.Files = nil }, err: prompt.ErrNoFiles, field: "Files"},
		{name: "empty file list", edit: func(in *prompt.Input) { in.Files = []prompt.File{} }, err: prompt.ErrNoFiles, field: "Files"},
		{name: "oversized file default limit", edit: func(in *prompt.Input) { in.Files[0].Content = big }, err: prompt.ErrFileTooLarge, field: "Files[0].Content", path: "package.json"},
		{name: "oversized file custom limit", limits: prompt.Limits{MaxFileBytes: 10}, edit: func(in *prompt.Input) {}, err: prompt.ErrFileTooLarge, field: "Files[0].Content", path: "package.json"},
		{name: "total too large", limits: prompt.Limits{MaxTotalBytes: 60}, edit: func(in *prompt.Input) {
			in.Files = append(in.Files, prompt.File{Path: "b", Content: []byte("0123456789")})
		}, err: prompt.ErrTotalTooLarge, field: "Files"},
		{name: "duplicate path", edit: func(in *prompt.Input) {
			in.Files = append(in.Files, prompt.File{Path: "a"}, prompt.File{Path: "package.json", Content: []byte("x")})
		}, err: prompt.ErrDuplicatePath, field: "Files", path: "package.json"},
		{name: "empty path", edit: func(in *prompt.Input) { in.Files[0].Path = "" }, err: prompt.ErrInvalidPath, field: "Files[0].Path"},
		{name: "absolute path", edit: func(in *prompt.Input) { in.Files[0].Path = "/etc/passwd" }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: "/etc/passwd"},
		{name: "dotdot path", edit: func(in *prompt.Input) { in.Files[0].Path = "a/../../b" }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: "a/../../b"},
		{name: "dotdot only", edit: func(in *prompt.Input) { in.Files[0].Path = ".." }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: ".."},
		{name: "dot path", edit: func(in *prompt.Input) { in.Files[0].Path = "." }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: "."},
		{name: "double slash", edit: func(in *prompt.Input) { in.Files[0].Path = "a//b" }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: "a//b"},
		{name: "trailing slash", edit: func(in *prompt.Input) { in.Files[0].Path = "a/" }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: "a/"},
		{name: "newline in path", edit: func(in *prompt.Input) { in.Files[0].Path = "a\nb" }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: "a\nb"},
		{name: "invalid utf8 path", edit: func(in *prompt.Input) { in.Files[0].Path = "a\xff" }, err: prompt.ErrInvalidPath, field: "Files[0].Path", path: "a\xff"},
		{name: "NaN score", edit: func(in *prompt.Input) { in.Examples = []prompt.Example{{ID: "e", Score: math.NaN()}} }, err: prompt.ErrInvalidScore, field: "Examples[0].Score"},
		{name: "infinite score", edit: func(in *prompt.Input) { in.Examples = []prompt.Example{{ID: "e"}, {ID: "f", Score: math.Inf(-1)}} }, err: prompt.ErrInvalidScore, field: "Examples[1].Score"},
		{name: "huge score", edit: func(in *prompt.Input) { in.Examples = []prompt.Example{{ID: "e", Score: 1e300}} }, err: prompt.ErrInvalidScore, field: "Examples[0].Score"},
		{name: "attempt zero", edit: func(in *prompt.Input) { in.Attempts = []prompt.AttemptSummary{{Attempt: 0}} }, err: prompt.ErrInvalidAttempt, field: "Attempts[0].Attempt"},
		{name: "exactly at file limit is fine", edit: func(in *prompt.Input) { in.Files[0].Content = exact }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := exampleInput()
			tt.edit(&in)
			b := prompt.Builder{Limits: tt.limits}
			_, err := b.Build(in)
			_, cerr := b.Canonical(in)
			if tt.err == nil {
				require.NoError(t, err)
				require.NoError(t, cerr)
				return
			}
			require.ErrorIs(t, err, tt.err)
			require.Equal(t, err.Error(), cerr.Error(), "Canonical and Build disagree")
			var ie *prompt.InputError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, tt.field, ie.Field)
			require.Equal(t, tt.path, ie.Path)
			require.NotEmpty(t, ie.Fix, "the error must name the fix")
			require.True(t, strings.HasPrefix(err.Error(), "prompt: "+tt.field))
			require.Contains(t, err.Error(), ie.Fix)
		})
	}
}

func TestBinaryContentIsBase64(t *testing.T) {
	in := exampleInput()
	in.Files = append(in.Files, prompt.File{Path: "logo.png", Content: []byte("\x89PNG\r\n\x1a\n\x00\x00")})
	p := prompttest.Build(t, in)
	require.Contains(t, p.User, "## File \"logo.png\"\n```base64 bytes=17\niVBORw0KGgoAAA==\n```\n")
	require.True(t, utf8.ValidString(p.User))
}

const validDiff = "diff --git a/go.mod b/go.mod\n--- a/go.mod\n+++ b/go.mod\n@@ -1,3 +1,3 @@\n module x\n-require golang.org/x/net v0.22.0\n+require golang.org/x/net v0.23.0\n \n"

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   string
		err    error
		line   int
	}{
		{name: "valid", answer: "```diff\n" + validDiff + "```\n", want: validDiff},
		{name: "valid with prose and no final newline", answer: "Here is the fix:\n\n```diff\n" + validDiff + "```", want: validDiff},
		{name: "longer fence and trailing spaces", answer: "````diff  \n" + validDiff + "`````\n", want: validDiff},
		{name: "info string with more words", answer: "```diff title\n" + validDiff + "```\n", want: validDiff},
		{name: "plain diff headers", answer: "```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n", want: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"},
		{name: "other blocks are ignored", answer: "```go\nfmt.Println()\n```\n```diff\n" + validDiff + "```\n```text\nbye\n```\n", want: validDiff},
		{name: "diff block inside a markdown block is not counted", answer: "````markdown\n```diff\nnot this\n```\n````\n```diff\n" + validDiff + "```\n", want: validDiff},
		{name: "context line holding a fence stays in the diff", answer: "```diff\n--- a/R.md\n+++ b/R.md\n@@ -1,2 +1,2 @@\n ```\n-a\n+b\n```\n", want: "--- a/R.md\n+++ b/R.md\n@@ -1,2 +1,2 @@\n ```\n-a\n+b\n"},
		{name: "CRLF kept inside the diff", answer: "```diff\r\n--- a/x\r\n+++ b/x\r\n```\r\n", want: "--- a/x\r\n+++ b/x\r\n"},
		{name: "empty answer", answer: "", err: prompt.ErrNoDiff},
		{name: "prose only", answer: "I cannot do that.", err: prompt.ErrNoDiff},
		{name: "garbage", answer: "\x00\xff``\n`` `\n~~~diff\n", err: prompt.ErrNoDiff},
		{name: "only other blocks", answer: "```go\npackage x\n```\n", err: prompt.ErrNoDiff},
		{name: "unfenced diff", answer: validDiff, err: prompt.ErrNoDiff},
		{name: "empty diff block", answer: "text\n```diff\n\n  \n```\n", err: prompt.ErrNoDiff, line: 2},
		{name: "two diff blocks", answer: "```diff\n" + validDiff + "```\nand\n```diff\n" + validDiff + "```\n", err: prompt.ErrMalformedAnswer, line: 12},
		{name: "unterminated diff block", answer: "ok\n```diff\n" + validDiff, err: prompt.ErrMalformedAnswer, line: 2},
		{name: "unterminated other block", answer: "```diff\n" + validDiff + "```\n```go\nx\n", err: prompt.ErrMalformedAnswer, line: 11},
		{name: "closing fence too short", answer: "````diff\n" + validDiff + "```\n", err: prompt.ErrMalformedAnswer, line: 1},
		{name: "not a unified diff", answer: "```diff\nchange the version to 1.2.3\n```\n", err: prompt.ErrMalformedAnswer, line: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompt.ParseAnswer(tt.answer)
			if tt.err == nil {
				require.NoError(t, err)
				require.Equal(t, tt.want, string(got))
				return
			}
			require.ErrorIs(t, err, tt.err)
			other := prompt.ErrMalformedAnswer
			if errors.Is(tt.err, prompt.ErrMalformedAnswer) {
				other = prompt.ErrNoDiff
			}
			require.NotErrorIs(t, err, other)
			var pe *prompt.ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tt.line, pe.Line)
			require.Nil(t, got)
		})
	}
}

func TestFormatAnswerRoundTrip(t *testing.T) {
	text := prompttest.Text()
	rapid.Check(t, func(t *rapid.T) {
		// A unified diff header, then arbitrary lines (with fences and
		// backticks in them), then a final newline.
		path := strings.ReplaceAll(text.Draw(t, "old path"), "\n", "")
		diff := "--- a/" + path + "\n+++ b/x\n" + text.Draw(t, "body") + "\n"
		got, err := prompt.ParseAnswer("Intro text.\n\n" + prompt.FormatAnswer([]byte(diff)) + "\nBye.\n")
		require.NoError(t, err)
		require.Equal(t, diff, string(got))
	})
}

func TestFormatAnswerAddsNewline(t *testing.T) {
	got, err := prompt.ParseAnswer(prompt.FormatAnswer([]byte("--- a/x\n+++ b/x")))
	require.NoError(t, err)
	require.Equal(t, "--- a/x\n+++ b/x\n", string(got))
}
