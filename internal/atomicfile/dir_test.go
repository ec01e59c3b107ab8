package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// tree maps every file under root to its contents, by slash path.
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	require.NoError(t, err)
	return out
}

func fillWith(files map[string]string) func(string) error {
	return func(dir string) error {
		for name, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

var (
	oldTree = map[string]string{"manifest.json": "old", "blobs/a": "old blob", "only-old": "x"}
	newTree = map[string]string{"manifest.json": "new", "blobs/b": "new blob"}
)

func TestWriteDir(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run.bundle")
	require.NoError(t, WriteDir(p, 0o755, fillWith(oldTree)))
	require.Equal(t, oldTree, tree(t, p))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	require.NoError(t, WriteDir(p, 0o755, fillWith(newTree)))
	require.Equal(t, newTree, tree(t, p))
	require.Equal(t, map[string]string{"run.bundle": "<dir>"}, snapshot(t, root), "no temporary entry is left")
}

func TestWriteDirReplacesAFile(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "out")
	require.NoError(t, os.WriteFile(p, []byte("a file"), 0o644))
	require.NoError(t, WriteDir(p, 0o755, fillWith(newTree)))
	require.Equal(t, newTree, tree(t, p))
}

// TestWriteDirCrash stops a directory commit at each of its steps, as a
// kill would, and checks what a reader sees then and after the next write
// cleans up: with the exchange the target always holds a whole tree, the
// old or the new one.
func TestWriteDirCrash(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("names cannot be exchanged here")
	}
	for _, tc := range []struct {
		name       string
		noExchange bool
		crashAt    string
		now        map[string]string // at the target right after the crash; nil: nothing
		later      map[string]string // after RemoveLeftovers
	}{
		{"exchange, after the exchange", false, "exchanged", newTree, newTree},
		{"fallback, between the renames", true, "moved-aside", nil, oldTree},
		{"fallback, after the renames", true, "renamed", newTree, newTree},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "run.bundle")
			require.NoError(t, WriteDir(p, 0o755, fillWith(oldTree)))
			o := Config{crashAt: tc.crashAt, noExchange: tc.noExchange}
			err := o.WriteDir(p, 0o755, fillWith(newTree))
			require.ErrorIs(t, err, errCrashed)
			if tc.now == nil {
				_, err := os.Lstat(p)
				require.ErrorIs(t, err, fs.ErrNotExist)
			} else {
				require.Equal(t, tc.now, tree(t, p))
			}
			require.Len(t, snapshot(t, root), 2, "the crash left one temporary tree")
			require.NoError(t, RemoveLeftovers(p))
			require.Equal(t, tc.later, tree(t, p))
			require.Equal(t, map[string]string{"run.bundle": "<dir>"}, snapshot(t, root))
		})
	}
}

func TestWriteDirExchangeIsAvailable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checked on Linux")
	}
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	require.NoError(t, os.Mkdir(a, 0o755))
	require.NoError(t, os.WriteFile(b, []byte("b"), 0o644))
	err := exchange(a, b)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("this file system cannot exchange names: %v", err)
	}
	require.NoError(t, err)
	fi, err := os.Stat(b)
	require.NoError(t, err)
	require.True(t, fi.IsDir(), "the names were exchanged")
}

func TestStageDirFillErrorLeavesNothing(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run.bundle")
	require.NoError(t, WriteDir(p, 0o755, fillWith(oldTree)))
	err := WriteDir(p, 0o755, func(dir string) error {
		_ = fillWith(newTree)(dir)
		return errInjected
	})
	require.ErrorIs(t, err, errInjected)
	require.Contains(t, err.Error(), "previous file is unchanged")
	require.Equal(t, oldTree, tree(t, p))
	require.Equal(t, map[string]string{"run.bundle": "<dir>"}, snapshot(t, root))
}

func TestStagedDirDiscard(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run.bundle")
	s, err := Config{}.StageDir(p, 0o755, fillWith(newTree))
	require.NoError(t, err)
	s.Discard()
	require.Empty(t, snapshot(t, root))
	require.ErrorIs(t, s.Commit(), ErrFinished)
}

func TestRemoveLeftoversTouchesOnlyItsNames(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "x")
	for _, n := range []string{".x.tmp-123", ".x.old-9", ".x.tmp-abc", ".y.tmp-1", "x.tmp-1", ".x.tmp-", ".xx.tmp-1"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, n), []byte(n), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(root, ".x.tmp-77"), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("current"), 0o644))
	require.NoError(t, RemoveLeftovers(p))
	require.Equal(t, map[string]string{
		"x": "current", ".x.tmp-abc": ".x.tmp-abc", ".y.tmp-1": ".y.tmp-1", "x.tmp-1": "x.tmp-1", ".x.tmp-": ".x.tmp-", ".xx.tmp-1": ".xx.tmp-1",
	}, snapshot(t, root))
}

func TestRemoveLeftoversRestoresAMissingTarget(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "x")
	require.NoError(t, os.WriteFile(filepath.Join(root, ".x.old-5"), []byte("old"), 0o644))
	require.NoError(t, RemoveLeftovers(p))
	require.Equal(t, map[string]string{"x": "old"}, snapshot(t, root))
}

func TestWriteFileReplacesADirectoryOnlyWhenAsked(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "out")
	require.NoError(t, WriteDir(p, 0o755, fillWith(oldTree)))
	require.Error(t, WriteFile(p, []byte("file"), 0o644))
	require.Equal(t, oldTree, tree(t, p))
	require.NoError(t, Config{ReplaceDir: true}.WriteFile(p, []byte("file"), 0o644))
	require.Equal(t, map[string]string{"out": "file"}, snapshot(t, root))
}
