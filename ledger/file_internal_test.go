package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLastLine(t *testing.T) {
	long := strings.Repeat("x", 10000)
	tests := []struct {
		name, content, want, err string
	}{
		{name: "only line", content: "a\n", want: "a"},
		{name: "short lines", content: "a\nbb\nccc\n", want: "ccc"},
		{name: "last line longer than the first read", content: "a\n" + long + "\n", want: long},
		{name: "only line, long", content: long + "\n", want: long},
		{name: "torn", content: "a\nb", err: "does not end with a newline"},
		{name: "too long", content: "a\n" + strings.Repeat("y", MaxEntryBytes+1) + "\n", err: "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "l")
			require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o644))
			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			got, err := lastLine(f, int64(len(tc.content)))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}
}
