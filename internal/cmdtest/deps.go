package cmdtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Deps returns the import path of every package pkg links, itself
// included: go list -deps pkg, run in the test's directory (so "." is
// the package under test). Test files are not included.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", pkg).Output()
	require.NoError(t, err, "go list -deps %s", pkg)
	return strings.Fields(string(out))
}

// RequireNoDeps fails t when pkg links any package of banned: one of them,
// or one below it (banned + "/...").
func RequireNoDeps(t testing.TB, pkg string, banned ...string) {
	t.Helper()
	for _, d := range Deps(t, pkg) {
		for _, b := range banned {
			require.False(t, d == b || strings.HasPrefix(d, b+"/"), "%s links %s", pkg, d)
		}
	}
}
