package promptparse_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/promptparse"
	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

// FuzzParse checks that Parse never panics, that every error names a line
// and wraps ErrMalformed, and that whatever it accepts is canonical and
// builds back to the same bytes.
func FuzzParse(f *testing.F) {
	in := prompttest.Small()
	f.Add(prompttest.Build(f, in).User)
	in.Files = append(in.Files, prompt.File{Path: "bin", Content: []byte{0, 0xff, '`'}},
		prompt.File{Path: "README.md", Content: []byte("````\n```text bytes=1\nx")})
	in.Examples = []prompt.Example{{ID: "e", Fix: "--- a/x\n+++ b/x\n", Score: 0.25, Band: "accept"}}
	in.Attempts = []prompt.AttemptSummary{{Attempt: 1, Error: "boom\n"}}
	f.Add(prompttest.Build(f, in).User)
	f.Add("")
	f.Add("# Task\n")
	anySize := prompt.Builder{Limits: prompt.Limits{MaxFileBytes: math.MaxInt, MaxTotalBytes: math.MaxInt}}
	f.Fuzz(func(t *testing.T, user string) {
		got, err := promptparse.Parse(user)
		if err != nil {
			require.ErrorIs(t, err, promptparse.ErrMalformed)
			var pe *promptparse.Error
			require.ErrorAs(t, err, &pe)
			require.Positive(t, pe.Line)
			return
		}
		p, err := anySize.Build(got)
		require.NoError(t, err)
		require.Equal(t, user, p.User)
		c, err := anySize.Canonical(got)
		require.NoError(t, err)
		require.Equal(t, c, got, "Parse returned a non-canonical Input")
	})
}
