package ledger_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain stops the package's PostgreSQL server after the tests and
// fails them if any goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(stopServerAfter{m}) }

// stopServerAfter runs the tests, then stops the shared server (before
// goleak looks for goroutines left behind).
type stopServerAfter struct{ m *testing.M }

func (s stopServerAfter) Run() int {
	code := s.m.Run()
	if err := stopSharedServer(); err != nil {
		fmt.Fprintln(os.Stderr, "ledger tests: stopping the PostgreSQL server:", err)
		return 1
	}
	return code
}
