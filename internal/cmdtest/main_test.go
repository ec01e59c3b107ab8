package cmdtest

import (
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

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
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
