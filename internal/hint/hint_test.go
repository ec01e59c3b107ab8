package hint

import (
	"flag"
	"os"
	"os/exec"
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
			want: "go run github.com/codegenie/codegenie/cmd/bundle diff 'a b' c"},
		{name: "required version", info: &debug.BuildInfo{Main: debug.Module{Path: "example.com/m"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.3.1"}}},
			want: "go run github.com/codegenie/codegenie/cmd/bundle@v0.3.1 diff 'a b' c"},
		{name: "replaced", info: &debug.BuildInfo{Main: debug.Module{Path: "example.com/m"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.0.0", Replace: &debug.Module{Path: "../codegenie"}}}},
			want: "go run github.com/codegenie/codegenie/cmd/bundle diff 'a b' c"},
		{name: "no build info", info: nil,
			want: "go run github.com/codegenie/codegenie/cmd/bundle@latest diff 'a b' c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Join(toolFor(tt.info, "bundle", "diff", "a b", "c")))
		})
	}
	require.Equal(t, "go run github.com/codegenie/codegenie/cmd/ledger", Join(toolFor(&debug.BuildInfo{Main: debug.Module{Path: Module}}, "ledger")))
	require.Contains(t, Tool("bundle"), "go run "+Module+"/cmd/bundle", "this test binary is built in this module")
}

// TestToolInTestBinaryOfAnotherModule: a go test binary records no
// dependencies, so Tool reads the go.mod of the module under test.
func TestToolInTestBinaryOfAnotherModule(t *testing.T) {
	for _, tt := range []struct{ gomod, want string }{
		{"module example.com/m\n\nrequire github.com/codegenie/codegenie v0.3.1\n", "go run github.com/codegenie/codegenie/cmd/bundle@v0.3.1"},
		{"module example.com/m\n\nrequire github.com/codegenie/codegenie v0.0.0\n\nreplace github.com/codegenie/codegenie => ../cg\n", "go run github.com/codegenie/codegenie/cmd/bundle"},
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tt.gomod), 0o644))
		t.Chdir(dir)
		d := goModDep()
		require.NotNil(t, d)
		require.Equal(t, tt.want, Join(toolFor(&debug.BuildInfo{Main: debug.Module{Path: "example.com/m"}, Deps: []*debug.Module{d}}, "bundle")))
	}
}

func TestGoTest(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(filepath.Dir(wd))
	got := GoTest("TestX/case one", false, "-artifacts")
	require.Equal(t, "cd "+root+" && go test ./internal/hint -run '^TestX$/^case one$' -count=1 -artifacts", got)
	require.Contains(t, GoTest("BenchmarkY", true), "-bench '^BenchmarkY$'")
	c := GoTestCommand("re-record", "TestX", false, `-cassettes.record=x\.yaml$`)
	require.Equal(t, Command{Purpose: "re-record", Dir: root,
		Argv: []string{"go", "test", "./internal/hint", "-run", "^TestX$", "-count=1", `-cassettes.record=x\.yaml$`}}, c)
}

// TestGoTestOf: the command names the package by its directory below the
// module root, as go test takes it from there, before every flag.
func TestGoTestOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pkg, test string
		bench           bool
		want            []string
	}{
		{"root", ".", "TestX", false, []string{"go", "test", ".", "-run", "^TestX$", "-count=1"}},
		{"below", "a/b", "TestX/sub", false, []string{"go", "test", "./a/b", "-run", "^TestX$/^sub$", "-count=1"}},
		{"dot-slash", "./a", "BenchmarkY", true, []string{"go", "test", "./a", "-bench", "^BenchmarkY$", "-count=1"}},
		{"dash", "-x", "TestX", false, []string{"go", "test", "./-x", "-run", "^TestX$", "-count=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, Command{Purpose: "reproduce", Argv: tt.want}, GoTestOf("reproduce", tt.pkg, tt.test, tt.bench))
		})
	}
}

// probe is a flag only this test binary knows, as -cassettes.record is
// known only to test binaries that import package cassettes.
var probe = flag.Bool("hint.probe", false, "set by TestGoTestPackageBeforeFlags")

// TestGoTestPackageBeforeFlags runs the printed line in a shell: go test
// stops reading packages at the first flag it does not know, so a
// package after -hint.probe would go to the test binary and the module
// root would be tested instead.
func TestGoTestPackageBeforeFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	line := GoTest("TestProbed", false, "-hint.probe")
	out, err := exec.CommandContext(t.Context(), "sh", "-c", line).CombinedOutput()
	require.NoError(t, err, "%s\n%s", line, out)
	require.Contains(t, string(out), "ok  \tgithub.com/codegenie/codegenie/internal/hint", line)
}

// TestProbed passes only when run by TestGoTestPackageBeforeFlags's line.
func TestProbed(t *testing.T) {
	if !*probe {
		t.Skip("run by TestGoTestPackageBeforeFlags")
	}
}

func TestLine(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"go run x/cmd/bundle diff 'a b' c", []string{"go", "run", "x/cmd/bundle", "diff", "a b", "c"}},
		{`go test -run '^it'\''s$' ./p`, []string{"go", "test", "-run", "^it's$", "./p"}},
		{"go test $X ./p", []string{"sh", "-c", "go test $X ./p"}},
		{"a && b", []string{"sh", "-c", "a && b"}},
		{"'unclosed", []string{"sh", "-c", "'unclosed"}},
	} {
		require.Equal(t, tt.want, Line("p", tt.line, "/m").Argv, tt.line)
	}
	c := Command{Argv: []string{"go", "run", "x", "a b", "it's", ""}, Dir: "/my mod"}
	require.Equal(t, c.Argv, Line("p", Join(c.Argv), "").Argv, "Line reads back what Join writes")
	require.Equal(t, `cd '/my mod' && go run x 'a b' 'it'\''s' ''`, c.String())
}

// TestRunPattern: the pattern selects exactly the test (and subtest)
// named, whatever characters its name holds.
func TestRunPattern(t *testing.T) {
	require.Equal(t, `^TestGate$/^npm\.v2$`, RunPattern("TestGate/npm.v2"))
	require.Equal(t, `^TestX$`, RunPattern("TestX"))
	require.Equal(t, `^Test\(a\|b\)\*$`, RunPattern("Test(a|b)*"))
}
