package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
)

// inChild reports whether this test binary is a gate's child process.
func inChild() bool {
	spec, _ := childproc.Self()
	return spec != nil
}

// cannotVary is the note that says why what it names is not varied in
// child processes here ("umask: ...", "CPU count: ..."), as a gate's
// report lists it; "" when it is varied.
func cannotVary(prefix string) string {
	_, _, notes := childproc.NewPlanner(func(string) bool { return false }).Summary()
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			return n
		}
	}
	return ""
}

// TestProcessRunsCatch: a pipeline whose output reads something constant
// within one process (an environment variable unset here, the pid, the
// temp directory, the local time zone, the CPU count, the hostname) passes
// every run in the test process, and is caught by the runs in child
// processes, which name what the output depends on. No golden digest is
// involved.
func TestProcessRunsCatch(t *testing.T) {
	t.Parallel()
	if _, set := os.LookupEnv(toyEnvVar); set && !inChild() {
		t.Skipf("%s is set in this environment; the test needs it unset, as in CI", toyEnvVar)
	}
	tests := []struct {
		bug     string
		depends string // "" for the process itself
	}{
		{"env", childproc.DimEnvPre + toyEnvVar},
		{"pid", ""},
		{"tmpdir", childproc.DimTempDir},
		{"tz", childproc.DimTZ},
		{"numcpu", childproc.DimCPUs},
		{"hostname", childproc.DimHostname},
	}
	for i, tt := range tests {
		t.Run(tt.bug, func(t *testing.T) {
			if raceEnabled && i%2 == 1 && !inChild() {
				t.Skip("every other case under -race, where child processes start slowly")
			}
			if why := cannotVary("CPU count: "); tt.bug == "numcpu" && why != "" && !inChild() {
				t.Skip(why)
			}
			if why := cannotVary("hostname and domain name: "); tt.bug == "hostname" && why != "" && !inChild() {
				t.Skip(why)
			}
			rep := Config{Iterations: 20, Processes: 4}.check(t, "toy-"+tt.bug, toyPipeline{bug: tt.bug}.run, false)
			require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
			require.Equal(t, 16, rep.Classes[0].InProcess, "every run in the test process agrees")
			require.NotNil(t, rep.Causes, "%s", rep)
			if tt.depends == "" {
				require.True(t, rep.Causes.FreshProcess, "%s", rep)
				require.Contains(t, rep.String(), "depends on the process itself")
			} else {
				require.Contains(t, rep.Causes.Depends, tt.depends, "%s", rep)
				require.Contains(t, rep.String(), "the outcome depends on: ")
			}
			require.Empty(t, rep.ReRecordCommand)
			t.Logf("%s: %d classes %s; depends on %q (fresh process: %v)", tt.bug, len(rep.Classes), rep.classSizes(), rep.Causes.Depends, rep.Causes.FreshProcess)
		})
	}
}

// TestChildFailures: a child that crashes, hangs or writes garbage is a
// failed run naming the child, never a hung or passing gate.
func TestChildFailures(t *testing.T) {
	tests := []struct {
		name, reason string
		misbehave    func()
	}{
		{"crash", "crashed", func() { os.Exit(3) }},
		{"hang", "hung", func() {
			r, w, _ := os.Pipe()
			defer w.Close()
			_, _ = r.Read(make([]byte, 1))
		}},
		{"garbage", "garbage", func() {
			testHookChildReport = func(b []byte) []byte { return append([]byte("\x00not json"), b...) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean := toyPipeline{}.run
			if inChild() && tt.name == "garbage" {
				tt.misbehave()
			}
			s := clean
			if inChild() && tt.name != "garbage" {
				s = func(ctx context.Context, run *Run) ([]byte, error) {
					tt.misbehave()
					return clean(ctx, run)
				}
			}
			start := time.Now()
			rep := Config{Iterations: 20, Processes: 2, ChildTimeout: 2 * time.Second}.check(t, "child-"+tt.name, s, false)
			require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
			require.Len(t, rep.Classes, 2)
			bad := rep.Classes[1]
			require.Equal(t, errorKindChild, bad.ErrorKind)
			require.Equal(t, 2, bad.Runs)
			require.Contains(t, bad.Message, "child process for run ")
			require.Contains(t, bad.Message, tt.reason)
			require.Less(t, time.Since(start), time.Minute)
			require.Len(t, rep.ClassProcesses(1), 2, "the failed runs name their children")
			require.NotZero(t, rep.ClassProcesses(1)[0].PID)
			require.True(t, strings.Contains(rep.String(), tt.reason))
		})
	}
}

// leftoverMarker is the argument of the process TestChildLeavesProcess's
// children start and leave behind (case i): a sleep long enough to
// outlive the test, named after the test process so no other process
// matches.
func leftoverMarker(testPID, i int) string { return fmt.Sprintf("%d.%d", 3600+testPID%100000, 25+i) }

// TestChildLeavesProcess: a child whose scenario starts a process and
// leaves it running fails its run (a ChildError naming the process), and
// the process is killed, so nothing the gate started outlives it: a
// process of the child's process group, one started with setsid (a
// session and group of its own) and a daemon made by a double fork
// (setsid, fork, the parent exits: orphaned, in another session) alike.
func TestChildLeavesProcess(t *testing.T) {
	if why := cannotVary("processes a child starts: "); why != "" && !inChild() {
		t.Skip(why)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	// A script ends once its sleep runs, so the leftover is named sleep.
	const running = `running() { for f in /proc/[0-9]*/cmdline; do [ "$(tr '\0' ' ' <"$f" 2>/dev/null)" = "sleep ARG " ] && return 0; done; return 1; }
`
	tests := []struct {
		name   string
		script string // run by sh; "" starts sleep and releases it
	}{
		{"group", ""},
		{"setsid", "setsid sleep ARG </dev/null >/dev/null 2>&1 &"},
		{"double fork", "setsid sh -c 'sleep ARG </dev/null >/dev/null 2>&1 & exit 0' & wait"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.script != "" && !inChild() {
				if why := cannotVary("processes a child starts that leave its process group"); why != "" {
					t.Skip(why)
				}
				if _, err := exec.LookPath("setsid"); err != nil {
					t.Skip("no setsid command")
				}
			}
			s := toyPipeline{}.run
			if inChild() {
				clean := s
				s = func(ctx context.Context, run *Run) ([]byte, error) {
					arg := leftoverMarker(os.Getppid(), i)
					if tt.script != "" {
						script := strings.ReplaceAll(running+tt.script+"\nuntil running; do :; done", "ARG", arg)
						if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
							return nil, fmt.Errorf("%v: %s", err, out)
						}
						return clean(ctx, run)
					}
					cmd := exec.Command(sleep, arg)
					if err := cmd.Start(); err != nil {
						return nil, err
					}
					_ = cmd.Process.Release()
					return clean(ctx, run)
				}
			}
			marker := leftoverMarker(os.Getpid(), i)
			if !inChild() {
				t.Cleanup(func() { killMarked(marker) })
			}
			rep := Config{Iterations: 10, Floor: 10, Processes: 2}.check(t, "child-leaves-process", s, false)
			require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
			require.Len(t, rep.Classes, 2, "%s", rep)
			bad := rep.Classes[1]
			require.Equal(t, errorKindChild, bad.ErrorKind)
			require.Equal(t, 2, bad.Runs)
			require.Contains(t, bad.Message, "leaked: left ")
			t.Logf("%s: %s", tt.name, firstLine(bad.Message))
			if runtime.GOOS == "linux" {
				require.Contains(t, bad.Message, "(sleep", "the leftover is named")
				if tt.script != "" {
					require.Contains(t, bad.Message, "(sleep, outside its process group)")
				}
				require.Empty(t, marked(marker), "no process a child started outlives the gate")
			}
		})
	}
}

// marked lists the pids of processes whose command line holds marker
// (Linux: read from /proc).
func marked(marker string) []int {
	var pids []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !slices.Contains(strings.Split(string(b), "\x00"), marker) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked kills what marked finds, so a failing run of the test leaves
// nothing behind either.
func killMarked(marker string) {
	for _, pid := range marked(marker) {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
}
