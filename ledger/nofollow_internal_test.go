package ledger

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSameAsPath: the check made after opening, which stands where
// O_NOFOLLOW is missing, refuses a file whose path now names another
// file or a link, and accepts the file the path names.
func TestSameAsPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.jsonl.repairs")
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, sameAsPath(f, path))

	other := filepath.Join(dir, "other")
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	require.NoError(t, os.Rename(other, path))
	require.ErrorIs(t, sameAsPath(f, path), errLink)
	require.ErrorContains(t, sameAsPath(f, path), "was replaced while it was opened")

	require.NoError(t, os.Remove(path))
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), path); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	require.ErrorContains(t, sameAsPath(f, path), "is a symbolic link")
}
