package harness

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them. The
// gate's environment variables are cleared first: these tests judge the
// harness itself (and set the variables explicitly where they test them),
// so a CI matrix's shard or results directory must not reach them.
func TestMain(m *testing.M) {
	// The sharding tests run this binary with the variables set on
	// purpose (HARNESS_SHARD_SUITE), as do gates' child processes.
	if os.Getenv(childVar) == "" && os.Getenv("HARNESS_SHARD_SUITE") == "" {
		for _, k := range []string{"CODEGENIE_GATE_SHARD", "CODEGENIE_GATE_RESULTS", "CODEGENIE_LEDGER", "CODEGENIE_GATE_SUMMARY"} {
			os.Unsetenv(k)
		}
	}
	goleak.VerifyTestMain(m)
}
