package safename

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOf(t *testing.T) {
	require.Equal(t, "npm-lodash.happy", Of("npm-lodash.happy"))
	for _, s := range []string{"npm-lodash/happy", "", ".", "..", "../etc", "a b", strings.Repeat("x", 200), "é", "\x1b[31m"} {
		got := Of(s)
		require.NotEmpty(t, got)
		require.LessOrEqual(t, len(got), MaxLen, s)
		require.NotEqual(t, '.', got[0], s)
		require.Equal(t, got, Of(s), "stable")
		for _, r := range got {
			require.True(t, isSafe(r), "%q -> %q", s, got)
		}
	}
	require.NotEqual(t, Of("a/b"), Of("a_b"), "distinct names stay distinct")
	require.NotEqual(t, Of("a/b"), Of("a?b"))
}
