package hint

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTool(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{name: "this module", info: &debug.BuildInfo{Main: debug.Module{Path: Module}},
			want: "go run github.com/codegenie/codegenie/cmd/replay diff 'a b' c"},
		{name: "required version", info: &debug.BuildInfo{Main: debug.Module{Path: "example.com/m"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.3.1"}}},
			want: "go run github.com/codegenie/codegenie/cmd/replay@v0.3.1 diff 'a b' c"},
		{name: "replaced", info: &debug.BuildInfo{Main: debug.Module{Path: "example.com/m"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.0.0", Replace: &debug.Module{Path: "../codegenie"}}}},
			want: "go run github.com/codegenie/codegenie/cmd/replay diff 'a b' c"},
		{name: "no build info", info: nil,
			want: "go run github.com/codegenie/codegenie/cmd/replay@latest diff 'a b' c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, toolFor(tt.info, "replay", "diff", "a b", "c"))
		})
	}
	require.Equal(t, "go run github.com/codegenie/codegenie/cmd/ledger", toolFor(&debug.BuildInfo{Main: debug.Module{Path: Module}}, "ledger"))
	require.Contains(t, Tool("replay"), "go run "+Module+"/cmd/replay", "this test binary is built in this module")
}

// TestToolInTestBinaryOfAnotherModule: a go test binary records no
// dependencies, so Tool reads the go.mod of the module under test.
func TestToolInTestBinaryOfAnotherModule(t *testing.T) {
	for _, tt := range []struct{ gomod, want string }{
		{"module example.com/m\n\nrequire github.com/codegenie/codegenie v0.3.1\n", "go run github.com/codegenie/codegenie/cmd/replay@v0.3.1"},
		{"module example.com/m\n\nrequire github.com/codegenie/codegenie v0.0.0\n\nreplace github.com/codegenie/codegenie => ../cg\n", "go run github.com/codegenie/codegenie/cmd/replay"},
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tt.gomod), 0o644))
		t.Chdir(dir)
		d := goModDep()
		require.NotNil(t, d)
		require.Equal(t, tt.want, toolFor(&debug.BuildInfo{Main: debug.Module{Path: "example.com/m"}, Deps: []*debug.Module{d}}, "replay"))
	}
}

func TestGoTest(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(filepath.Dir(wd))
	got := GoTest("TestX/case one", false, "-artifacts")
	require.Equal(t, "cd "+root+" && go test -run '^TestX$/^case one$' -count=1 -artifacts ./internal/hint", got)
	require.Contains(t, GoTest("BenchmarkY", true), "-bench '^BenchmarkY$'")
}
