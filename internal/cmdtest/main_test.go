package cmdtest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// commands are the module's commands, each built into bin.
var commands = []string{"bundle", "gate-merge", "refresh-cassettes", "ledger", "detvet"}

// bin is the directory holding the built commands.
var bin string

// TestMain builds the commands, except with -short (make race): every
// test here runs them as processes, so the race detector has nothing of
// theirs to watch, and each test skips (make test runs them).
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(buildAndRun(m))
}

// needCommands skips t when the commands were not built (-short).
func needCommands(t *testing.T) {
	t.Helper()
	if bin == "" {
		t.Skip("runs the built commands; not built with -short")
	}
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cmdtest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, c := range commands {
		args = append(args, "github.com/codegenie/codegenie/cmd/"+c)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "cmdtest: go %v: %v\n%s", args, err, out)
		return 1
	}
	bin = dir
	return m.Run()
}

// command returns the path of the built command name.
func command(name string) string {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(bin, name)
}
