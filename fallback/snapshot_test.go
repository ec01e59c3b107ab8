package fallback_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/prompt"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// needGit skips the test when git is not on PATH.
func needGit(t testing.TB) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not on PATH; the go-gitdiff checks still run in other tests")
	}
	return git
}

// gitRun runs git in dir with a config that does not depend on the user's.
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.autocrlf=false", "-c", "core.fileMode=false", "-c", "core.quotePath=true"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// writeRepo writes files into dir (which must be empty of tracked files).
func writeRepo(t testing.TB, dir string, files []prompt.File) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Content, 0o644))
	}
}

// gitRepo creates a git repository holding files, staged, and returns it.
func gitRepo(t testing.TB, files []prompt.File) string {
	t.Helper()
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q")
	writeRepo(t, dir, files)
	gitRun(t, dir, "add", "-A")
	return dir
}

func files(kv ...string) []prompt.File {
	var fs []prompt.File
	for i := 0; i < len(kv); i += 2 {
		fs = append(fs, prompt.File{Path: kv[i], Content: []byte(kv[i+1])})
	}
	return fs
}

var snapshotRepos = []struct {
	name  string
	files []prompt.File
}{
	{"single", files("README.md", "hello\n")},
	{"nested", files("go.mod", "module x\n", "cmd/x/main.go", "package main\n", "internal/a/a.go", "package a\n", "internal/b.go", "package internal\n")},
	{"tricky-order", files("a.b", "1", "a/b", "2", "a-b", "3", "a0", "4", "a/b.c/d", "5", "a/b-c", "6", "ab", "7")},
	{"dir-vs-file-prefix", files("foo/bar", "x\n", "foo.txt", "y\n", "foo-bar", "z\n", "foo0/x", "w\n")},
	{"empty-and-no-eol", files("empty", "", "noeol.txt", "no newline at end", "crlf.txt", "a\r\nb\r\n")},
	{"spaces-and-unicode", files("dir with space/file name.txt", "s\n", "é/ü.txt", "u\n", "Z", "upper\n")},
	{"deep", files("a/b/c/d/e/f/g.txt", "deep\n", "a/b/c/x", "x\n", "a/z", "z\n")},
}

func TestSnapshotSHAMatchesGitWriteTree(t *testing.T) {
	needGit(t)
	for _, tc := range snapshotRepos {
		t.Run(tc.name, func(t *testing.T) {
			dir := gitRepo(t, tc.files)
			want := strings.TrimSpace(gitRun(t, dir, "write-tree"))
			got, err := fallback.RepoContext{Files: tc.files}.SnapshotSHA()
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

func TestSnapshotSHAEmpty(t *testing.T) {
	got, err := fallback.RepoContext{}.SnapshotSHA()
	require.NoError(t, err)
	require.Equal(t, fallback.EmptyTreeSHA, got)
	if _, err := exec.LookPath("git"); err == nil {
		dir := t.TempDir()
		gitRun(t, dir, "init", "-q")
		require.Equal(t, strings.TrimSpace(gitRun(t, dir, "write-tree")), got)
	}
}

func TestSnapshotSHARejectsBadPaths(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []prompt.File
	}{
		{"empty path", files("", "x")},
		{"absolute", files("/etc/passwd", "x")},
		{"dot-dot", files("a/../b", "x")},
		{"dot", files("./a", "x")},
		{"double slash", files("a//b", "x")},
		{"trailing slash", files("a/", "x")},
		{"backslash", files(`a\b`, "x")},
		{"control char", files("a\nb", "x")},
		{"dot git", files(".git/config", "x")},
		{"duplicate", files("a", "x", "a", "y")},
		{"file and dir", files("a", "x", "a.b", "z", "a/b", "y")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fallback.RepoContext{Files: tc.files}.SnapshotSHA()
			require.ErrorIs(t, err, fallback.ErrInvalidRepo)
			var perr *fallback.PathError
			require.ErrorAs(t, err, &perr)
		})
	}
}

// TestSnapshotSHAGenerated compares against git on a few generated repos
// in one git repository (cleared between cases, to keep it fast).
func TestSnapshotSHAGenerated(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q")
	for i := range 12 {
		fs := repoGen().Example(i)
		gitRun(t, dir, "rm", "-rq", "--cached", "--ignore-unmatch", ".")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if e.Name() != ".git" {
				require.NoError(t, os.RemoveAll(filepath.Join(dir, e.Name())))
			}
		}
		writeRepo(t, dir, fs)
		gitRun(t, dir, "add", "-A")
		want := strings.TrimSpace(gitRun(t, dir, "write-tree"))
		got, err := fallback.RepoContext{Files: fs}.SnapshotSHA()
		require.NoError(t, err)
		require.Equal(t, want, got, "repo %d: %v", i, fs)
	}
}

// repoGen draws a valid repo: distinct paths from a small alphabet that
// makes git's directory ordering matter.
func repoGen() *rapid.Generator[[]prompt.File] {
	seg := rapid.SampledFrom([]string{"a", "b", "a.b", "a-b", "a0", "ab", "B", "z"})
	return rapid.Custom(func(t *rapid.T) []prompt.File {
		n := rapid.IntRange(1, 8).Draw(t, "files")
		seen := map[string]bool{}
		var fs []prompt.File
		for i := 0; i < n; i++ {
			depth := rapid.IntRange(1, 3).Draw(t, "depth")
			parts := make([]string, depth)
			for j := range parts {
				parts[j] = seg.Draw(t, "segment")
			}
			p := strings.Join(parts, "/")
			if conflicts(seen, p) {
				continue
			}
			seen[p] = true
			fs = append(fs, prompt.File{Path: p, Content: []byte(rapid.StringMatching(`[a-z\n]{0,20}`).Draw(t, "content"))})
		}
		return fs
	})
}

// conflicts reports whether p clashes with a path in seen (equal, or one is
// a directory of the other).
func conflicts(seen map[string]bool, p string) bool {
	for q := range seen {
		if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

func TestSnapshotSHAIgnoresFileOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		fs := repoGen().Draw(rt, "repo")
		perm := rapid.Permutation(fs).Draw(rt, "permutation")
		a, err := fallback.RepoContext{Files: fs}.SnapshotSHA()
		require.NoError(rt, err)
		b, err := fallback.RepoContext{Files: perm}.SnapshotSHA()
		require.NoError(rt, err)
		require.Equal(rt, a, b)
	})
}

func TestSnapshotSHASensitiveToContent(t *testing.T) {
	base := files("a/b", "1\n", "c", "2\n")
	a, err := fallback.RepoContext{Files: base}.SnapshotSHA()
	require.NoError(t, err)
	for _, other := range [][]prompt.File{
		files("a/b", "1\n", "c", "3\n"),
		files("a/c", "1\n", "c", "2\n"),
		files("a/b", "1\n"),
		files("a.b", "1\n", "c", "2\n"),
	} {
		b, err := fallback.RepoContext{Files: other}.SnapshotSHA()
		require.NoError(t, err)
		require.NotEqual(t, a, b)
	}
}
