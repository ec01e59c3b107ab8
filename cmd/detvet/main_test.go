package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const src = `package p

import "time"

func Stamp() time.Time { return time.Now() }

func Clean(xs []int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}
`

// build compiles detvet into a temporary directory and writes a module
// example.com/p with one finding; it returns the binary and the module.
func build(t *testing.T) (bin, mod string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	tmp := t.TempDir()
	bin = filepath.Join(tmp, "detvet")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	mod = filepath.Join(tmp, "p")
	require.NoError(t, os.Mkdir(mod, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/p\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "p.go"), []byte(src), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(mod, "empty"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "p_test.go"), []byte("package p\n\nimport \"testing\"\n\nfunc TestClean(t *testing.T) { Clean(nil) }\n"), 0o644))
	return bin, mod
}

// runIn runs name args in dir and returns the combined output and the exit
// code.
func runIn(t *testing.T, dir, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), 0
}

func TestCommand(t *testing.T) {
	bin, mod := build(t)
	tests := []struct {
		name     string
		cmd      string
		args     []string
		wantCode int
		want     string
	}{
		{name: "no arguments checks the module", cmd: bin, wantCode: 3, want: "p.go:5:38: time.Now reads the wall clock"},
		{name: "no arguments counts", cmd: bin, wantCode: 3, want: "detvet: checked 1 package: 1 finding\n"},
		{name: "standalone finds", cmd: bin, args: []string{"-pkgs=^example.com/p$", "./..."}, wantCode: 3, want: "p.go:5:38: time.Now reads the wall clock"},
		{name: "pattern selecting nothing", cmd: bin, args: []string{"-pkgs=^other$", "./..."}, wantCode: 0, want: "detvet: checked 0 packages (1 more matched but are not selected; -pkgs=. checks them): 0 findings\n"},
		{name: "package pattern matching nothing", cmd: bin, args: []string{"./empty/..."}, wantCode: 1, want: `detvet: pattern "./empty/..." matches no package; run detvet in your module's directory`},
		{name: "missing directory", cmd: bin, args: []string{"./nosuch"}, wantCode: 1, want: `detvet: pattern "./nosuch" matches no package (`},
		{name: "go vet finds", cmd: "go", args: []string{"vet", "-vettool=" + bin, "./..."}, wantCode: 1, want: "p.go:5:38: time.Now reads the wall clock"},
		{name: "go vet selecting nothing", cmd: "go", args: []string{"vet", "-vettool=" + bin, "-pkgs=^other$", "./..."}, wantCode: 0},
		{name: "tests counted once", cmd: bin, args: []string{"-tests"}, wantCode: 3, want: "detvet: checked 1 package: 1 finding\n"},
		{name: "json", cmd: bin, args: []string{"-json"}, wantCode: 3, want: `"category": "wallclock"`},
		{name: "bad pattern", cmd: bin, args: []string{"-pkgs=(", "./..."}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runIn(t, mod, tt.cmd, tt.args...)
			require.Equal(t, tt.wantCode, code, "output:\n%s", out)
			if tt.want != "" {
				require.Contains(t, out, tt.want)
			}
		})
	}
}

const userMod = `module example.com/user

go 1.26

require github.com/codegenie/codegenie v0.0.0

replace github.com/codegenie/codegenie => REPLACE
`

// userSrc assembles its output by ranging over a map: the bug a user's
// pipeline brings to detvet.
const userSrc = `package summarise

import "strings"

// Join renders the scores, in whatever order the map yields them.
func Join(scores map[string]string) string {
	var parts []string
	for name, s := range scores {
		parts = append(parts, name+"="+s)
	}
	return strings.Join(parts, ",")
}
`

// TestGoRunInAnotherModule runs the command as a user would, through go
// run with no arguments in a module that requires this one.
func TestGoRunInAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command in another module")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(filepath.Dir(wd))
	require.FileExists(t, filepath.Join(root, "go.mod"))
	mod := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	for name, content := range map[string]string{
		"go.mod":                 strings.Replace(userMod, "REPLACE", filepath.ToSlash(root), 1),
		"go.sum":                 string(sum),
		"summarise/summarise.go": userSrc,
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644))
	}
	t.Setenv("GOPROXY", "off")
	out, code := runIn(t, mod, "go", "run", "github.com/codegenie/codegenie/cmd/detvet")
	require.Equal(t, 1, code, "go run exits 1 when the command fails; output:\n%s", out)
	require.Contains(t, out, "exit status 3")
	require.Contains(t, out, filepath.Join("summarise", "summarise.go")+":9:11: append to parts inside a range over a map")
	require.Contains(t, out, "detvet: checked 1 package: 1 finding\n")

	out, code = runIn(t, mod, "go", "run", "github.com/codegenie/codegenie/cmd/detvet", "./nosuch")
	require.Equal(t, 1, code, "output:\n%s", out)
	require.Contains(t, out, `detvet: pattern "./nosuch" matches no package`)
}
