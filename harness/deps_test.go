package harness_test

import (
	"testing"

	"github.com/codegenie/codegenie/internal/cmdtest"
)

// TestLinksNoLedger: the runner links no ledger package: a gated test
// writes result files (package gate), and cmd/gate-merge appends them to
// a ledger, so a test binary links no ledger store nor database driver.
func TestLinksNoLedger(t *testing.T) {
	t.Parallel()
	cmdtest.RequireNoDeps(t, ".", "github.com/codegenie/codegenie/ledger")
}
