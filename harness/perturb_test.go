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

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
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
	t.Parallel()
	tests := []struct {
		name    string
		depends string
		note    func() (string, error)
		skip    func() string
	}{
		{"umask", childproc.DimUmask, createdMode, func() string { return cannotVary("umask: ") }},
		{"executable", childproc.DimExe, func() (string, error) { return os.Executable() }, nil},
		{"home", childproc.DimHome, func() (string, error) { return os.UserHomeDir() }, nil},
		{"config-dir", childproc.DimHome, func() (string, error) { return os.UserConfigDir() }, nil},
		{"path", childproc.DimPath, func() (string, error) { return "PATH " + os.Getenv("PATH"), nil }, nil}, // Path on Windows: Getenv ignores case there
		{"domain", childproc.DimDomain, func() (string, error) { return "domain " + childproc.DomainName(), nil }, func() string {
			return cannotVary("hostname and domain name: ")
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
			require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
			require.Equal(t, 16, rep.Classes[0].InProcess, "every run in the test process agrees")
			require.NotNil(t, rep.Causes, "%s", rep)
			require.Equal(t, []string{tt.depends}, rep.Causes.Depends, "%s", rep)
			require.Contains(t, rep.String(), "the outcome depends on: "+tt.depends)
			t.Logf("%s: %d classes %s; depends on %q", tt.name, len(rep.Classes), rep.classSizes(), rep.Causes.Depends)
		})
	}
}

// TestHeldHomeIsNotVaried: a Config that holds HOME (USERPROFILE on
// Windows) as configuration keeps every child's home, and the report
// says so.
func TestHeldHomeIsNotVaried(t *testing.T) {
	t.Parallel()
	main := "HOME"
	if runtime.GOOS == "windows" {
		main = "USERPROFILE"
	}
	vars := append(DefaultConfigVars(), ConfigVar{Name: main, Reason: "our pipeline's own configuration lives in the home"})
	rep := Config{Iterations: 8, Floor: 8, Processes: 2, ConfigVars: vars}.check(t, "held-home", noteScenario(func() (string, error) { return os.UserHomeDir() }), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
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
		t.Cleanup(childproc.Inject(childproc.Faults{NoExec: true}))
	}
	rep := Config{Iterations: 8, Floor: 8, Processes: 2}.check(t, "executable-refused", noteScenario(func() (string, error) { return os.Executable() }), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	found := false
	for _, n := range rep.Processes.NotVaried {
		found = found || strings.HasPrefix(n, "executable path: the test binary could not be run from the temporary directory: ")
	}
	require.True(t, found, "%s", rep)
	// Nothing else is noted beyond what this machine cannot vary, which
	// now includes the executable path.
	_, _, notes := childproc.NewPlanner(func(string) bool { return false }).Summary()
	require.ElementsMatch(t, notes, rep.Processes.NotVaried, "%s", rep)
}
