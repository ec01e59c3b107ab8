package childproc

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// clearHomeEnv points the home at a new directory with no XDG directory,
// Anthropic configuration directory or Go toolchain variable set, and
// returns it.
func clearHomeEnv(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"XDG_CONFIG_HOME", "ANTHROPIC_CONFIG_DIR", "GOPATH", "GOCACHE", "GOENV"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return home
}

// writeFiles writes each file of files (path relative to root: content)
// with its directories.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
}

// TestFreshHomeKeepsSDKConfiguration: a child's fresh home holds a copy
// of each SDK configuration entry of the test process's home (regular
// files, not links), so an SDK reading its configuration file finds the
// same bytes; what no SDK reads is left out, the Go toolchain keeps its
// directories, and the planner's summary names what the copies hold.
func TestFreshHomeKeepsSDKConfiguration(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the home layout tested is the Unix one")
	}
	home := clearHomeEnv(t)
	writeFiles(t, home, map[string]string{
		".aws/config":                      "[default]\nregion = eu-west-3\n",
		".config/anthropic/active_config":  "work\n",
		".config/gcloud/active_config":     "default\n",
		".config/gcloud/logs/2025/run.log": "not configuration\n",
		".mytool/state":                    "not SDK configuration\n",
	})

	base := t.TempDir()
	env, err := freshHome(base)
	require.NoError(t, err)
	fresh := filepath.Join(base, "home")
	require.Contains(t, env, "HOME="+fresh)
	require.Contains(t, env, "XDG_CONFIG_HOME="+filepath.Join(fresh, ".config"))
	require.Contains(t, env, "GOPATH="+filepath.Join(home, "go"), "the Go toolchain keeps its directories")
	require.Contains(t, env, "GOENV="+filepath.Join(home, ".config", "go", "env"))

	// A GOPATH set with go env -w is read from the go env file, never
	// overridden by the default.
	writeFiles(t, home, map[string]string{".config/go/env": "GOPATH=/srv/go\n"})
	env = toolchainDirs()
	require.NotContains(t, env, "GOPATH="+filepath.Join(home, "go"))
	require.Contains(t, env, "GOENV="+filepath.Join(home, ".config", "go", "env"))
	for _, rel := range []string{".aws/config", ".config/anthropic/active_config", ".config/gcloud/active_config"} {
		b, err := os.ReadFile(filepath.Join(fresh, rel))
		require.NoError(t, err, rel)
		want, _ := os.ReadFile(filepath.Join(home, rel))
		require.Equal(t, string(want), string(b), rel)
		fi, err := os.Lstat(filepath.Join(fresh, rel))
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular(), "%s is a copy, not a link", rel)
	}
	for _, rel := range []string{".mytool", ".config/gcloud/logs"} {
		_, err = os.Lstat(filepath.Join(fresh, rel))
		require.ErrorIs(t, err, os.ErrNotExist, "only SDK configuration is copied: %s", rel)
	}

	_, _, notes := NewPlanner(func(string) bool { return false }).Summary()
	require.Contains(t, notes, fmt.Sprintf("SDK configuration: a fresh home holds copies of %s, %s, %s (a child's writes stay in its copies)",
		filepath.Join(home, ".aws"), filepath.Join(home, ".config", "gcloud"), filepath.Join(home, ".config", "anthropic")))
}

// TestFreshHomeWritesStayInTheChild: through a fresh home, every file of
// every SDK configuration entry (each platform's layout: .aws, the
// Anthropic and gcloud directories under ~/.config, or under APPDATA on
// Windows; a link inside an entry included) is appended to, then
// truncated and rewritten, and a new file is created in each directory;
// the test process's home is byte-identical afterwards, and the writes
// are in the fresh home.
func TestFreshHomeWritesStayInTheChild(t *testing.T) {
	files := map[string]string{
		".aws/config":                                                 "[default]\nregion = eu-west-3\n",
		".aws/creds.d/prod":                                           "[default]\naws_access_key_id = test\n",
		".aws/sso/cache/0123abcd.json":                                `{"accessToken":"test"}`,
		".mytool/state":                                               "not SDK configuration\n",
		".config/anthropic/active_config":                             "work\n",
		".config/anthropic/configs/work.json":                         `{"profile":"work"}`,
		".config/gcloud/application_default_credentials.json":         `{"type":"authorized_user"}`,
		".config/gcloud/configurations/config_default":                "[core]\nproject = test\n",
		"AppData/Roaming/Anthropic/active_config":                     "work\n",
		"AppData/Roaming/gcloud/application_default_credentials.json": `{"type":"authorized_user"}`,
	}
	tests := []struct {
		name, goos string
		entries    []string
	}{
		{"unix", "linux", []string{".aws", ".config/gcloud", ".config/anthropic"}},
		{"windows", "windows", []string{".aws", "AppData/Roaming/Anthropic", "AppData/Roaming/gcloud"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := clearHomeEnv(t)
			writeFiles(t, home, files)
			if ok, _ := symlinkSupport(); ok {
				require.NoError(t, os.Symlink(filepath.Join(home, ".aws", "creds.d", "prod"), filepath.Join(home, ".aws", "credentials")))
			}
			lookup := func(k string) (string, bool) {
				if k == "APPDATA" {
					return filepath.Join(home, "AppData", "Roaming"), true
				}
				return "", false
			}
			entries := configEntries(tt.goos, home, lookup)
			var rels []string
			for _, e := range entries {
				rels = append(rels, filepath.ToSlash(e.rel))
			}
			require.Equal(t, tt.entries, rels)
			before := treeDigest(t, home)

			fresh := filepath.Join(t.TempDir(), "home")
			if tt.goos != "windows" && runtime.GOOS != "windows" {
				// The platform's own layout, as a child gets it.
				_, err := freshHome(filepath.Dir(fresh))
				require.NoError(t, err)
			} else {
				require.NoError(t, copyEntries(fresh, entries))
			}
			written := 0
			for _, e := range entries {
				written += writeThrough(t, filepath.Join(fresh, e.rel))
			}
			require.GreaterOrEqual(t, written, 3, "every entry was written through")
			require.Equal(t, before, treeDigest(t, home), "a write in the fresh home reached the test process's home")
			b, err := os.ReadFile(filepath.Join(fresh, ".aws", "config"))
			require.NoError(t, err)
			require.Equal(t, "rewritten\n", string(b), "the writes are in the fresh home")
		})
	}
}

// writeThrough appends to every file under root, then truncates and
// rewrites it, and creates a file in every directory; it returns how many
// files it wrote.
func writeThrough(t testing.TB, root string) int {
	t.Helper()
	var paths, dirs []string
	// The trailing separator walks the entry through a link, as an SDK
	// reaching it through the fresh home would.
	require.NoError(t, filepath.WalkDir(root+string(filepath.Separator), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		} else {
			paths = append(paths, p)
		}
		return nil
	}))
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err, p)
		_, err = f.WriteString("[appended]\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, os.WriteFile(p, []byte("rewritten\n"), 0o600), p)
	}
	for _, d := range dirs {
		require.NoError(t, os.WriteFile(filepath.Join(d, "new-by-child"), []byte("new\n"), 0o600))
	}
	return len(paths)
}

// treeDigest describes every entry under root: its path, type and mode,
// and a file's content hash or a link's target, in path order.
func treeDigest(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v", filepath.ToSlash(rel), fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + to
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	}))
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestFreshHomeRefusesWhatItCannotCopy: an SDK configuration entry with a
// link leaving it, a link to a directory, too many files or too many
// bytes cannot be copied into a fresh home: children keep the test
// process's home, and the planner says why, naming the path.
func TestFreshHomeRefusesWhatItCannotCopy(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the home layout tested is the Unix one")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, home, outside string)
		why   string
	}{
		{"link leaving the entry", func(t *testing.T, home, outside string) {
			require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(home, ".aws", "credentials")))
		}, "credentials is a symbolic link leaving "},
		{"link to a directory", func(t *testing.T, home, _ string) {
			require.NoError(t, os.Mkdir(filepath.Join(home, ".aws", "sso"), 0o700))
			require.NoError(t, os.Symlink(filepath.Join(home, ".aws", "sso"), filepath.Join(home, ".aws", "cache")))
		}, "cache is a symbolic link to a directory"},
		{"too many files", func(t *testing.T, home, _ string) {
			d := filepath.Join(home, ".config", "gcloud", "configurations")
			require.NoError(t, os.MkdirAll(d, 0o700))
			for i := range maxHomeFiles {
				require.NoError(t, os.WriteFile(filepath.Join(d, fmt.Sprintf("config_%d", i)), nil, 0o600))
			}
		}, fmt.Sprintf("it holds more than %d files and directories", maxHomeFiles)},
		{"too many bytes", func(t *testing.T, home, _ string) {
			f, err := os.Create(filepath.Join(home, ".aws", "big"))
			require.NoError(t, err)
			require.NoError(t, f.Truncate(maxHomeBytes+1)) // sparse
			require.NoError(t, f.Close())
		}, fmt.Sprintf("it holds more than %d bytes", maxHomeBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ok, why := symlinkSupport(); !ok && strings.HasPrefix(tt.name, "link") {
				t.Skip(why)
			}
			home := clearHomeEnv(t)
			outside := t.TempDir()
			writeFiles(t, home, map[string]string{".aws/config": "[default]\n"})
			writeFiles(t, outside, map[string]string{"secret": "not to be copied\n"})
			tt.setup(t, home, outside)
			ok, why := homeSupport(func(string) bool { return false })
			require.False(t, ok)
			require.Contains(t, why, "the SDK configuration under the home cannot be copied into a fresh one: ")
			require.Contains(t, why, tt.why)
			_, _, notes := NewPlanner(func(string) bool { return false }).Summary()
			require.Contains(t, notes, "HOME and XDG directories: "+why)
			_, err := freshHome(t.TempDir())
			require.ErrorContains(t, err, tt.why)
		})
	}
}
