package harness

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
)

// TestUmaskRefusedDegrades: where the kernel refuses the thread that
// starts a child a umask of its own (a seccomp profile may forbid
// unshare), children keep the test process's umask and the report says
// the umask was not varied, and why; no child fails to start.
func TestUmaskRefusedDegrades(t *testing.T) {
	if !inChild() {
		t.Cleanup(childproc.Inject(childproc.Faults{NoUnshare: true}))
	}
	rep := Config{Iterations: 8, Floor: 8, Processes: 2}.check(t, "umask-refused", noteScenario(createdMode), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Contains(t, rep.Processes.NotVaried, "umask: the kernel refused the starting thread a umask of its own (unshare CLONE_FS): operation not permitted")
}

// TestUTSRefusedDegrades: where the kernel refuses every new UTS
// namespace, each child is started again without one (a new command: a
// Cmd starts once), keeps the machine's hostname and domain name, and the
// report says why they were not varied.
func TestUTSRefusedDegrades(t *testing.T) {
	if !inChild() {
		t.Cleanup(childproc.Inject(childproc.Faults{NoUTS: true}))
	}
	rep := Config{Iterations: 8, Floor: 8, Processes: 2}.check(t, "uts-refused", noteScenario(func() (string, error) { return os.Hostname() }), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	found := false
	for _, n := range rep.Processes.NotVaried {
		found = found || strings.HasPrefix(n, "hostname and domain name: the kernel refused a new UTS namespace: ") && strings.HasSuffix(n, "operation not permitted")
	}
	require.True(t, found, "%s", rep)
}
