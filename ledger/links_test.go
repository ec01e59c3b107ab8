package ledger_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// TestEmbeddedStoreRefusesLinks: a symbolic link (or a folder) planted at
// the ledger's lock file, its repair log or the ledger file itself is
// refused by the operation that would open it for writing, naming it; the
// link's target is neither created nor changed, and the ledger is left as
// it was.
func TestEmbeddedStoreRefusesLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		suffix string // of the planted path after the ledger's
		target bool   // the link's target exists
		dir    bool   // plant a folder rather than a link
		op     func(t *testing.T, dsn string) error
		// repairs: the ledger ends in a torn line, which op repairs
		repairs bool
	}{
		{name: "lock to a file, append", suffix: ".lock", target: true, op: appendOne},
		{name: "lock to nothing, append", suffix: ".lock", op: appendOne},
		{name: "lock to a file, verify", suffix: ".lock", target: true, op: verify},
		{name: "lock to a file, repair", suffix: ".lock", target: true, op: repair, repairs: true},
		{name: "lock is a folder, append", suffix: ".lock", dir: true, op: appendOne},
		{name: "repair log to a file", suffix: ".repairs", target: true, op: repair, repairs: true},
		{name: "repair log to nothing", suffix: ".repairs", op: repair, repairs: true},
		{name: "ledger to a file, append", suffix: "", target: true, op: appendOne},
		{name: "ledger to a file, repair", suffix: "", target: true, op: repair, repairs: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dsn := filepath.Join(dir, "ledger.jsonl")
			fill(t, open(t, dsn, &clock{}), 1)
			if tc.repairs {
				appendRaw(t, dsn, []byte(`{"schema":1,"se`)) // a torn line to repair
			}
			planted := dsn + tc.suffix
			content := []byte("the user's file\n")
			if tc.suffix == "" {
				var err error
				content, err = os.ReadFile(dsn) // a ledger an append or repair would change
				require.NoError(t, err)
			}
			if _, err := os.Lstat(planted); err == nil {
				require.NoError(t, os.Remove(planted))
			}
			target := filepath.Join(t.TempDir(), "target")
			if tc.target {
				require.NoError(t, os.WriteFile(target, content, 0o600))
			}
			if tc.dir {
				require.NoError(t, os.Mkdir(planted, 0o755))
			} else if err := os.Symlink(target, planted); err != nil {
				t.Skipf("cannot make a symbolic link here: %v", err)
			}
			var ledgerBefore []byte
			if tc.suffix != "" {
				var err error
				ledgerBefore, err = os.ReadFile(dsn)
				require.NoError(t, err)
			}

			err := tc.op(t, dsn)
			require.Error(t, err)
			require.ErrorContains(t, err, planted)
			if tc.dir {
				require.ErrorContains(t, err, "is not a regular file")
			} else {
				require.ErrorContains(t, err, "is a symbolic link")
			}

			if tc.target {
				b, err := os.ReadFile(target)
				require.NoError(t, err)
				require.Equal(t, string(content), string(b), "the link's target is unchanged")
			} else {
				_, err := os.Lstat(target)
				require.ErrorIs(t, err, os.ErrNotExist, "the link's target was not created")
			}
			if tc.suffix != "" {
				after, err := os.ReadFile(dsn)
				require.NoError(t, err)
				require.Equal(t, ledgerBefore, after, "the ledger is unchanged")
			}
		})
	}
}

func appendOne(t *testing.T, dsn string) error {
	t.Helper()
	s, err := ledger.Open(context.Background(), dsn)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Append(context.Background(), verdict("npm", ledger.Pass))
	return err
}

func verify(t *testing.T, dsn string) error {
	t.Helper()
	s, err := ledger.Open(context.Background(), dsn)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Verify(context.Background())
	return err
}

func repair(t *testing.T, dsn string) error {
	t.Helper()
	_, err := ledger.Config{}.Repair(context.Background(), dsn)
	return err
}
