//go:build linux

package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cmdlineHolds lists the pids of the processes whose command line holds
// the argument arg.
func cmdlineHolds(arg string) []string {
	var out []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), arg) {
			out = append(out, filepath.Base(filepath.Dir(p)))
		}
	}
	return out
}

// TestRunInGroupKillsEscapedProcesses: a child that leaves a process
// running in its group, one started with setsid (a session of its own)
// and a daemon made by a double fork (setsid, fork, the parent exits:
// orphaned, in another session) is found leaked, each process is named,
// those outside the group said to be, and none survives.
func TestRunInGroupKillsEscapedProcesses(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	tests := []struct {
		name, script string
		outside      bool
	}{
		{"group", "sleep ARG &", false},
		{"setsid", "setsid sleep ARG </dev/null >/dev/null 2>&1 &", true},
		{"double fork", "setsid sh -c 'sleep ARG </dev/null >/dev/null 2>&1 & exit 0' & wait", true},
	}
	// Each script ends once its sleep runs, so the leftover is named sleep.
	const running = `running() { for f in /proc/[0-9]*/cmdline; do [ "$(tr '\0' ' ' <"$f" 2>/dev/null)" = "sleep ARG " ] && return 0; done; return 1; }
`
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			arg := fmt.Sprintf("%d.%d", 3000+i, os.Getpid())
			t.Cleanup(func() {
				for _, pid := range cmdlineHolds(arg) {
					t.Errorf("pid %s (sleep %s) survived", pid, arg)
				}
			})
			mark := markVar + "=" + nonce()
			var out tailBuffer
			out.max = maxOutput
			_, werr, left, err := runInGroup(&out, mark, func(w *os.File) (*exec.Cmd, error) {
				cmd := exec.Command("sh", "-c", strings.ReplaceAll(running+tt.script+"\nuntil running; do :; done", "ARG", arg))
				cmd.Env = append(os.Environ(), mark)
				cmd.Stdout, cmd.Stderr = w, w
				cmd.SysProcAttr = groupAttr()
				return cmd, cmd.Start()
			})
			require.NoError(t, err)
			require.NoError(t, werr, out.String())
			require.Len(t, left, 1, "%q", left)
			require.Contains(t, left[0], "(sleep")
			if tt.outside {
				require.Contains(t, left[0], ", outside its process group)")
			} else {
				require.NotContains(t, left[0], "outside")
			}
			require.Empty(t, cmdlineHolds(arg), "no process the child started outlives it")
		})
	}
}
