package ledger

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// TestOpenPostgresNotLinked: without the driver linked, a postgres:// DSN
// is refused with the import to add, and its password is not printed.
// (This test binary links the driver for the conformance suite, so the
// registry is emptied for the test.)
func TestOpenPostgresNotLinked(t *testing.T) {
	saved := ledgerdb.SetDriversForTest(nil)
	t.Cleanup(func() { ledgerdb.SetDriversForTest(saved) })
	_, err := Open(context.Background(), "postgres://ci:s3cret@db.internal/ledger")
	require.ErrorIs(t, err, ledgerdb.ErrBadDSN)
	require.EqualError(t, err, `ledger: bad DSN: postgres://ci:xxxxx@db.internal/ledger names PostgreSQL, whose driver is not linked into this program: add import _ "github.com/codegenie/codegenie/ledger/postgres" to a file of the package (for a gated test, beside its TestMain)`)
	_, err = Open(context.Background(), "mysql://ci@db/ledger")
	require.ErrorContains(t, err, "no store is registered for the scheme")
}

// TestCoreLinksNoDatabaseDriver: the ledger package, and so every gated
// test that imports harness, links no database driver.
func TestCoreLinksNoDatabaseDriver(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, dep := range strings.Fields(string(out)) {
		require.False(t, strings.Contains(dep, "jackc/") || strings.HasPrefix(dep, "golang.org/x/text"), "ledger links %s", dep)
	}
}
