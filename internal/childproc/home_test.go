package childproc

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreshHomeKeepsSDKConfiguration: a child's fresh home links each SDK
// configuration entry of the test process's home (nothing is copied), so
// an SDK reading its configuration file finds the same bytes.
func TestFreshHomeKeepsSDKConfiguration(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the home layout tested is the Unix one")
	}
	if ok, why := symlinkSupport(); !ok {
		t.Skip(why)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	os.Unsetenv("XDG_CONFIG_HOME")
	for _, k := range []string{"ANTHROPIC_CONFIG_DIR", "GOPATH", "GOCACHE", "GOENV"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	write := func(rel, content string) {
		p := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	write(".aws/config", "[default]\nregion = eu-west-3\n")
	write(".config/anthropic/active_config", "work\n")
	write(".mytool/state", "not SDK configuration\n")

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
	write(".config/go/env", "GOPATH=/srv/go\n")
	env = toolchainDirs()
	require.NotContains(t, env, "GOPATH="+filepath.Join(home, "go"))
	require.Contains(t, env, "GOENV="+filepath.Join(home, ".config", "go", "env"))
	for _, rel := range []string{".aws/config", ".config/anthropic/active_config"} {
		b, err := os.ReadFile(filepath.Join(fresh, rel))
		require.NoError(t, err, rel)
		want, _ := os.ReadFile(filepath.Join(home, rel))
		require.Equal(t, string(want), string(b), rel)
	}
	for _, rel := range []string{".aws", ".config/anthropic"} {
		fi, err := os.Lstat(filepath.Join(fresh, rel))
		require.NoError(t, err)
		require.Equal(t, os.ModeSymlink, fi.Mode().Type(), "%s is a link, not a copy", rel)
	}
	_, err = os.Lstat(filepath.Join(fresh, ".mytool"))
	require.ErrorIs(t, err, os.ErrNotExist, "only SDK configuration is linked")
}
