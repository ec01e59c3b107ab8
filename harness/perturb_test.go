package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// noteScenario is the clean toy pipeline with note's value put before its
// output.
func noteScenario(note func() (string, error)) Scenario {
	return func(ctx context.Context, run *Run) ([]byte, error) {
		n, err := note()
		if err != nil {
			return nil, err
		}
		out, err := toyPipeline{}.run(ctx, run)
		return append([]byte("# "+n+"\n"), out...), err
	}
}

// createdMode creates a file and returns its permission bits, which the
// process umask decides.
func createdMode() (string, error) {
	d, err := os.MkdirTemp("", "mode-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(d)
	p := filepath.Join(d, "out.txt")
	if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("mode %v", fi.Mode().Perm()), nil
}

// TestReprotestPerturbationsCatch: a pipeline whose output reads the mode
// of a file it creates (the umask), os.Executable, os.UserHomeDir,
// os.UserConfigDir, PATH or the domain name passes every run in the test
// process and is caught by the runs in child processes, which name that
// perturbation alone as the cause. No golden digest is involved.
func TestReprotestPerturbationsCatch(t *testing.T) {
	tests := []struct {
		name    string
		depends string
		note    func() (string, error)
		skip    func() string
	}{
		{"umask", dimUmask, createdMode, umaskNote},
		{"executable", dimExe, func() (string, error) { return os.Executable() }, nil},
		{"home", dimHome, func() (string, error) { return os.UserHomeDir() }, nil},
		{"config-dir", dimHome, func() (string, error) { return os.UserConfigDir() }, nil},
		{"path", dimPath, func() (string, error) { return "PATH " + os.Getenv(pathVar()), nil }, nil},
		{"domain", dimDomain, func() (string, error) { return "domain " + domainName(), nil }, func() string {
			if runtime.GOOS != "linux" {
				return "the domain name is varied only on Linux"
			}
			if host, why := hostnameSupport(); !host {
				return "no new UTS namespace here: " + why
			}
			return ""
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if raceEnabled && i%2 == 1 && !inChild() {
				t.Skip("every other case under -race, where child processes start slowly")
			}
			if tt.skip != nil && !inChild() {
				if why := tt.skip(); why != "" {
					t.Skip(why)
				}
			}
			rep := Config{Iterations: 20, Processes: 4}.check(t, "reprotest-"+tt.name, noteScenario(tt.note), false)
			require.Equal(t, Nondeterministic, rep.Verdict, "%s", rep)
			require.Equal(t, 16, rep.Classes[0].InProcess, "every run in the test process agrees")
			require.NotNil(t, rep.Causes, "%s", rep)
			require.Equal(t, []string{tt.depends}, rep.Causes.Depends, "%s", rep)
			require.Contains(t, rep.String(), "the outcome depends on: "+tt.depends)
			t.Logf("%s: %d classes %s; depends on %q", tt.name, len(rep.Classes), classSizes(rep.Classes), rep.Causes.Depends)
		})
	}
}

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

// TestHeldHomeIsNotVaried: a Config that holds HOME (USERPROFILE on
// Windows) as configuration keeps every child's home, and the report
// says so.
func TestHeldHomeIsNotVaried(t *testing.T) {
	main := "HOME"
	if runtime.GOOS == "windows" {
		main = "USERPROFILE"
	}
	vars := append(DefaultConfigVars(), ConfigVar{Name: main, Reason: "our pipeline's own configuration lives in the home"})
	rep := Config{Iterations: 8, Floor: 8, Processes: 2, ConfigVars: vars}.check(t, "held-home", noteScenario(func() (string, error) { return os.UserHomeDir() }), false)
	require.Equal(t, Pass, rep.Verdict, "%s", rep)
	require.Contains(t, rep.Processes.NotVaried, "HOME and XDG directories: "+main+" is held as configuration (Config.ConfigVars)")
}

// TestExecutableRefusedDegrades: where the child's directory does not
// allow running the test binary (a noexec temporary directory), the child
// runs it at its own path and the report says the executable path was
// not varied, and why; no child fails to start.
func TestExecutableRefusedDegrades(t *testing.T) {
	if runtime.GOOS == "windows" && !inChild() {
		t.Skip("a file without execute bits still runs on Windows")
	}
	if !inChild() {
		old := linkExecutable
		linkExecutable = func(base, exe string) (string, error) {
			p := filepath.Join(base, filepath.Base(exe))
			return p, os.WriteFile(p, []byte("not to be run"), 0o600)
		}
		t.Cleanup(func() { linkExecutable, exeRefused = old, refusal{} })
	}
	rep := Config{Iterations: 8, Floor: 8, Processes: 2}.check(t, "executable-refused", noteScenario(func() (string, error) { return os.Executable() }), false)
	require.Equal(t, Pass, rep.Verdict, "%s", rep)
	require.Len(t, rep.Processes.NotVaried, 1+len(newPlanner(true, "", func(string) bool { return false }).notes), "%s", rep)
	found := false
	for _, n := range rep.Processes.NotVaried {
		found = found || strings.HasPrefix(n, "executable path: the test binary could not be run from the temporary directory: ")
	}
	require.True(t, found, "%s", rep)
}
