package hint

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSafeName(t *testing.T) {
	require.Equal(t, "npm-lodash.happy", SafeName("npm-lodash.happy"))
	for _, s := range []string{"npm-lodash/happy", "", ".", "..", "../etc", "a b", strings.Repeat("x", 200), "é", "\x1b[31m"} {
		got := SafeName(s)
		require.NotEmpty(t, got)
		require.LessOrEqual(t, len(got), maxSafeName, s)
		require.NotEqual(t, '.', got[0], s)
		require.Equal(t, got, SafeName(s), "stable")
		for _, r := range got {
			require.True(t, safeNameRune(r), "%q -> %q", s, got)
		}
	}
	require.NotEqual(t, SafeName("a/b"), SafeName("a_b"), "distinct names stay distinct")
	require.NotEqual(t, SafeName("a/b"), SafeName("a?b"))
}
