package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// mainThreadEnv makes the test binary start a child with another umask
// from its main thread during initialisation, then say whether the
// process's umask changed.
const mainThreadEnv = "CODEGENIE_CHILDPROC_MAIN_THREAD_UMASK"

// init runs on the main thread (the main goroutine is locked to it
// during initialisation): under mainThreadEnv it starts a child with
// umask 0077 from there, as a gate that happens to start one on the
// main thread does, and exits 0 when the process's umask is the same
// after, 1 when not.
func init() {
	if os.Getenv(mainThreadEnv) == "" {
		return
	}
	want := UmaskText()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{}
	done := make(chan error, 1)
	pinAndStart(cmd, nil, 0o077, done)
	if err := <-done; err != nil {
		fmt.Println("start:", err)
		os.Exit(2)
	}
	_ = cmd.Wait()
	if got := UmaskText(); got != want {
		fmt.Printf("the process's umask was %s and is %s after starting a child with umask 0077\n", want, got)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestMainThreadKeepsItsUmask: starting a child with another umask from
// the main thread leaves the process's umask (as the kernel reports it,
// and as the report shows it) as it was.
func TestMainThreadKeepsItsUmask(t *testing.T) {
	if UmaskText() == "" {
		t.Skip("no umask in /proc/self/status (Linux before 4.7)")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainThreadEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
