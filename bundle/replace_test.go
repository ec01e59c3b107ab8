package bundle

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteNeverReplacesWhatIsNotABundle: a write refuses an existing
// output that is not a bundle, with or without Force, and leaves it as it
// was; it replaces a bundle only with Force.
func TestWriteNeverReplacesWhatIsNotABundle(t *testing.T) {
	ctx := context.Background()
	b := single(realisticRun(t, 0))
	srcDir, srcFile := writeBoth(t, b)
	type target struct {
		make     func(t *testing.T, p string) // creates what is at p
		isBundle bool
	}
	targets := map[string]target{
		"a folder of other files": {func(t *testing.T, p string) {
			require.NoError(t, os.MkdirAll(filepath.Join(p, "src"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, "src", "main.go"), []byte("package main\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(p, manifestFile), []byte("{}"), 0o644))
		}, false},
		"a text file": {func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte("notes\n"), 0o644))
		}, false},
		"an empty folder": {func(t *testing.T, p string) { require.NoError(t, os.Mkdir(p, 0o755)) }, false},
		"a bundle folder with an extra file": {func(t *testing.T, p string) {
			require.NoError(t, os.CopyFS(p, os.DirFS(srcDir)))
			require.NoError(t, os.WriteFile(filepath.Join(p, "notes.txt"), []byte("mine"), 0o644))
		}, false},
		"a link to a bundle": {func(t *testing.T, p string) { require.NoError(t, os.Symlink(srcFile, p)) }, false},
		"a bundle folder":    {func(t *testing.T, p string) { require.NoError(t, os.CopyFS(p, os.DirFS(srcDir))) }, true},
		"a bundle file": {func(t *testing.T, p string) {
			raw, err := os.ReadFile(srcFile)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, raw, 0o644))
		}, true},
	}
	writers := map[string]func(o Config, p string) error{
		"Write":     func(o Config, p string) error { return o.Write(ctx, p, b) },
		"WriteFile": func(o Config, p string) error { return o.WriteFile(ctx, p, b) },
	}
	for tname, tg := range targets {
		for wname, write := range writers {
			for _, force := range []bool{false, true} {
				t.Run(tname+"/"+wname+map[bool]string{false: "", true: "/force"}[force], func(t *testing.T) {
					p := filepath.Join(t.TempDir(), "out")
					tg.make(t, p)
					before := treeOf(t, p)
					err := write(Config{Force: force}, p)
					if tg.isBundle && force {
						require.NoError(t, err)
						_, err := Config{}.Verify(ctx, p)
						require.NoError(t, err)
						return
					}
					require.ErrorIs(t, err, ErrExists)
					var be *BundleError
					require.ErrorAs(t, err, &be)
					require.Equal(t, p, be.Path)
					if !tg.isBundle {
						require.Contains(t, err.Error(), "is not a bundle")
					} else {
						require.Contains(t, err.Error(), "Force")
					}
					require.Equal(t, before, treeOf(t, p), "the output was changed")
				})
			}
		}
	}
}

// treeOf maps every entry under p (p itself included; links not
// followed) to its contents.
func treeOf(t testing.TB, p string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(p, func(q string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(q)
			out[q] = "link " + l
			return err
		case fi.IsDir():
			out[q] = "dir"
		default:
			b, err := os.ReadFile(q)
			out[q] = string(b)
			return err
		}
		return nil
	}))
	return out
}
