package prompt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/prompt"
)

func FuzzParse(f *testing.F) {
	in := exampleInput()
	f.Add(build(f, in).User)
	in.Files = append(in.Files, prompt.File{Path: "bin", Content: []byte{0, 0xff, '`'}},
		prompt.File{Path: "README.md", Content: []byte("````\n```text bytes=1\nx")})
	in.Examples = []prompt.Example{{ID: "e", Fix: "--- a/x\n+++ b/x\n", Score: 0.25, Band: "accept"}}
	in.Attempts = []prompt.AttemptSummary{{Attempt: 1, Error: "boom\n"}}
	f.Add(build(f, in).User)
	f.Add("")
	f.Add("# Task\n")
	f.Fuzz(func(t *testing.T, user string) {
		got, err := prompt.Parse(user)
		if err != nil {
			require.ErrorIs(t, err, prompt.ErrMalformedPrompt)
			return
		}
		// Parse accepts only canonical text: whatever Build accepts of
		// the result must render back to the same bytes.
		p, err := prompt.Builder{Limits: prompt.Limits{MaxFileBytes: 1 << 30, MaxTotalBytes: 1 << 30}}.Build(got)
		if err != nil {
			return
		}
		require.Equal(t, user, p.User)
	})
}

func FuzzParseAnswer(f *testing.F) {
	f.Add("```diff\n" + validDiff + "```\n")
	f.Add("text\n````markdown\n```diff\nx\n```\n````\n```diff\n--- a/x\n+++ b/x\n```")
	f.Add("```diff\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, answer string) {
		d, err := prompt.ParseAnswer(answer)
		if err != nil {
			noDiff, malformed := errors.Is(err, prompt.ErrNoDiff), errors.Is(err, prompt.ErrMalformedAnswer)
			require.True(t, noDiff != malformed, "error must wrap exactly one sentinel: %v", err)
			return
		}
		require.NotEmpty(t, d)
		require.True(t, strings.HasSuffix(string(d), "\n"))
		again, err := prompt.ParseAnswer(prompt.FormatAnswer(d))
		require.NoError(t, err)
		require.Equal(t, d, again)
	})
}
