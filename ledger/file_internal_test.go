package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/ledgerdb"
)

func TestLastLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 10000)
	tests := []struct {
		name, content, want, err string
	}{
		{name: "only line", content: "a\n", want: "a"},
		{name: "short lines", content: "a\nbb\nccc\n", want: "ccc"},
		{name: "last line longer than the first read", content: "a\n" + long + "\n", want: long},
		{name: "only line, long", content: long + "\n", want: long},
		{name: "torn", content: "a\nb", err: "does not end with a newline"},
		{name: "too long", content: "a\n" + strings.Repeat("y", ledgerdb.MaxEntryBytes+1) + "\n", err: "longer than"},
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

// TestFailedAppendLeavesNoPartialLine: a write that fails part-way (disk
// full) is undone before the lock is released, so the ledger stays
// appendable and every earlier entry is kept.
func TestFailedAppendLeavesNoPartialLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	s, err := openFile(path, time.Now)
	require.NoError(t, err)
	e := Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: gate.Pass}}
	_, err = s.Append(ctx, e)
	require.NoError(t, err)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	s.write = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	_, err = s.Append(ctx, e)
	require.ErrorIs(t, err, syscall.ENOSPC)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)

	s.write = (*os.File).Write
	got, err := s.Append(ctx, e)
	require.NoError(t, err)
	require.Equal(t, uint64(2), got.Seq)
	rep, err := (&Store{s: s}).Verify(ctx)
	require.NoError(t, err)
	require.NoError(t, rep.Err())
}
