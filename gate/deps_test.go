package gate_test

import (
	"testing"

	"github.com/codegenie/codegenie/internal/cmdtest"
)

// TestLinksNeitherRunnerNorLedger: gate is the leaf both the runner and
// the ledger build on: it links neither, nor the cassettes.
func TestLinksNeitherRunnerNorLedger(t *testing.T) {
	t.Parallel()
	cmdtest.RequireNoDeps(t, ".", "github.com/codegenie/codegenie/harness", "github.com/codegenie/codegenie/ledger", "github.com/codegenie/codegenie/cassettes")
}
