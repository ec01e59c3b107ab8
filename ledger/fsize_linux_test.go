package ledger_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// TestFileSizeLimitLeavesTheLedgerAppendable: an append that hits
// RLIMIT_FSIZE part-way (EFBIG, in a child process so the limit binds
// only there) fails, and leaves the file as it was.
func TestFileSizeLimitLeavesTheLedgerAppendable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if path := os.Getenv("LEDGER_TEST_FSIZE"); path != "" {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		lim := uint64(fi.Size()) + 4096
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}))
		s, err := ledger.Open(ctx, path)
		require.NoError(t, err)
		e := verdict("big", ledger.Pass)
		e.Evidence = string(bytes.Repeat([]byte("e"), 64<<10))
		_, err = s.Append(ctx, e)
		require.ErrorIs(t, err, syscall.EFBIG)
		return
	}
	dsn, _ := embeddedBackend().fresh(t)
	s := open(t, dsn, &clock{})
	fill(t, s, 2)
	before, err := os.ReadFile(dsn)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileSizeLimitLeavesTheLedgerAppendable$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LEDGER_TEST_FSIZE="+dsn)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	after, err := os.ReadFile(dsn)
	require.NoError(t, err)
	require.Equal(t, before, after)
	e, err := s.Append(ctx, verdict("npm", ledger.Pass))
	require.NoError(t, err)
	require.Equal(t, uint64(3), e.Seq)
	verifyOK(t, s)
}
