package harness

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// runVerified is goleak.VerifyTestMain that returns the exit code.
func runVerified(m *testing.M) int {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			return 1
		}
	}
	return code
}

// TestMain fails the package's tests if any goroutine outlives them. The
// gate's environment variables are cleared first: these tests judge the
// harness itself (and set the variables explicitly where they test them),
// so a CI matrix's shard or results directory must not reach them.
func TestMain(m *testing.M) {
	// The sharding tests run this binary with the variables set on
	// purpose (HARNESS_SHARD_SUITE), as do gates' child processes.
	if !inChild() && os.Getenv("HARNESS_SHARD_SUITE") == "" {
		for _, k := range []string{"CODEGENIE_GATE_SHARD", "CODEGENIE_GATE_RESULTS", "CODEGENIE_LEDGER", "CODEGENIE_GATE_SUMMARY"} {
			os.Unsetenv(k)
		}
		// The failing gates of these tests keep their evidence in a
		// directory of their own, not in the user's cache.
		dir, err := os.MkdirTemp("", "harness-evidence-")
		if err != nil {
			panic(err)
		}
		os.Setenv("CODEGENIE_GATE_EVIDENCE", dir)
		code := runVerified(m)
		os.RemoveAll(dir)
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
