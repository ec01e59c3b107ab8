package main

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var fixedNow = func() time.Time { return time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC) }

// repoRoot is this repository's module root.
var repoRoot = filepath.Join("..", "..")

// runCmd runs the command in process in the module at dir.
func runCmd(t testing.TB, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := command{dir: dir, now: fixedNow}.run(t.Context(), args, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// tree maps every file under root (slash paths) to its bytes, leaving
// out the folder of a cassette directory's refresh lock, which stays
// (git ignores it).
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".refresh.lock" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-nope"}, "flag provided but not defined"},
		{"bad regexp", []string{"-run", "("}, "-run:"},
		{"bad pattern", []string{"testdata/[x.yaml"}, `cassette pattern "testdata/[x.yaml"`},
		{"force without reason", []string{"-force"}, "-force needs -reason"},
		{"check and force", []string{"-check", "-force", "-reason", "r"}, "-check records and reviews only"},
		{"recover and patterns", []string{"-recover", "x.yaml"}, "-recover takes only -dir"},
		{"dir without recover", []string{"-dir", "d"}, "-dir goes with -recover"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, stderr, code := runCmd(t, t.TempDir(), tt.args...)
			require.Equal(t, 2, code, stderr)
			require.Contains(t, stderr, "refresh-cassettes: ")
			require.Contains(t, stderr, tt.want)
			require.Contains(t, stderr, "usage:")
		})
	}
}

// TestHelp: -h says what the command does in a user's module, with an
// example, and lists every flag (testdata/help.golden).
func TestHelp(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runCmd(t, t.TempDir(), "-h")
	require.Equal(t, 0, code, stderr)
	golden := filepath.Join("testdata", "help.golden")
	if *update {
		require.NoError(t, atomicfile.WriteFile(golden, []byte(stdout), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), stdout)
	require.Contains(t, stdout, "go run github.com/codegenie/codegenie/cmd/refresh-cassettes -dry-run")
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.Equal(t, 0, exitCode(nil, &b))
	require.Equal(t, 1, exitCode(errors.New("boom"), &b))
	require.Equal(t, 2, exitCode(usagef("bad"), &b))
	require.Equal(t, 3, exitCode(errDrifted, &b))
	require.Contains(t, b.String(), "refresh-cassettes: boom")
}

// copyCommitted copies this repository's committed cassettes and their
// manifest into a new directory.
func copyCommitted(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(repoRoot, "cassettes", "testdata")
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
		}
	}
	return dir
}

// TestRecoverSaysWhatItFound: -recover in a directory with nothing left
// to recover but a cassette that no longer matches its manifest fails
// saying so, and never claims the directory is consistent; in one that
// verifies, it says it is consistent.
func TestRecoverSaysWhatItFound(t *testing.T) {
	t.Parallel()
	dir := copyCommitted(t)
	stdout, stderr, code := runCmd(t, t.TempDir(), "-recover", "-dir", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, dir+" is consistent")

	path := filepath.Join(dir, "npm-lodash.happy.yaml")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(b, []byte("msg_fake_"), []byte("msg_edit_"), 1), 0o644))
	stdout, stderr, code = runCmd(t, t.TempDir(), "-recover", "-dir", dir)
	require.Equal(t, 1, code, stdout)
	require.NotContains(t, stdout, "consistent")
	require.Contains(t, stderr, dir+": no refresh is left unfinished, but the directory does not verify")
	require.Contains(t, stderr, "cassette digest does not match the manifest")
}
