package prompt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/prompt"
)

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
