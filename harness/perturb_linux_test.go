package harness

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUmaskRefusedDegrades: where the kernel refuses the thread that
// starts a child a umask of its own (a seccomp profile may forbid
// unshare), children keep the test process's umask and the report says
// the umask was not varied, and why; no child fails to start.
func TestUmaskRefusedDegrades(t *testing.T) {
	if !inChild() {
		old := unshareFS
		unshareFS = func() error { return syscall.EPERM }
		t.Cleanup(func() {
			unshareFS = old
			umaskRefused.Lock()
			umaskRefused.why = ""
			umaskRefused.Unlock()
		})
	}
	rep := Config{Iterations: 8, Floor: 8, Processes: 2}.check(t, "umask-refused", noteScenario(createdMode), false)
	require.Equal(t, Pass, rep.Verdict, "%s", rep)
	require.Contains(t, rep.Processes.NotVaried, "umask: the kernel refused the starting thread a umask of its own (unshare CLONE_FS): operation not permitted")
}
