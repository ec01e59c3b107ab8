package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
		{name: "standalone finds", cmd: bin, args: []string{"-pkgs=^example.com/p$", "./..."}, wantCode: 3, want: "p.go:5:38: time.Now reads the wall clock"},
		{name: "standalone default pattern skips", cmd: bin, args: []string{"./..."}, wantCode: 0},
		{name: "go vet finds", cmd: "go", args: []string{"vet", "-vettool=" + bin, "-pkgs=^example.com/p$", "./..."}, wantCode: 1, want: "p.go:5:38: time.Now reads the wall clock"},
		{name: "go vet default pattern skips", cmd: "go", args: []string{"vet", "-vettool=" + bin, "./..."}, wantCode: 0},
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
