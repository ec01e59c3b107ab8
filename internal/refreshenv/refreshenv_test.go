package refreshenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestModuleRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644))
	pkg := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.Equal(t, root, ModuleRoot(pkg))
	require.Equal(t, root, ModuleRoot(root))
	require.NoError(t, os.Mkdir(filepath.Join(pkg, "go.mod"), 0o755))
	require.Equal(t, root, ModuleRoot(pkg), "a folder named go.mod is not a module")
}

func TestStagedPath(t *testing.T) {
	root, stage := filepath.FromSlash("/m"), filepath.FromSlash("/s")
	tests := []struct {
		name, abs, want string
		ok              bool
	}{
		{"in the module", "/m/a/testdata/x.yaml", "/s/a/testdata/x.yaml", true},
		{"outside it", "/elsewhere/x.yaml", "", false},
		{"above it", "/x.yaml", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := StagedPath(stage, root, filepath.FromSlash(tt.abs))
			require.Equal(t, tt.ok, ok)
			require.Equal(t, filepath.FromSlash(tt.want), got)
		})
	}
}
