package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// processOutput is what one process of the command printed and its exit
// status.
type processOutput struct {
	stdout, stderr string
	code           int
}

// TestOutputIsTheSameBytes: each command, on its main and error paths,
// prints the same bytes in separate processes (other GOMAXPROCS, other
// map seeds) for the same inputs.
func TestOutputIsTheSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ledger")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	good := seed(t, "npm", "go", "npm", "pypi", "go")
	bad := seed(t, "npm", "go", "npm")
	b, err := os.ReadFile(bad)
	require.NoError(t, err)
	b = bytes.Replace(b, []byte(`"scenario":"go"`), []byte(`"scenario":"GO"`), 1)
	b = append(b, "junk\n{\"schema\":7}\n"...)
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	torn := seed(t, "npm", "go")
	f, err := os.OpenFile(torn, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema":1,"seq":3,"kind":"verd`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	run := func(procs int, args ...string) processOutput {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", procs), "CODEGENIE_LEDGER=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			require.NoError(t, err)
		}
		return processOutput{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
	}
	// fresh copies path, for commands that change the ledger.
	fresh := func(path string) string {
		p := filepath.Join(t.TempDir(), "ledger.jsonl")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	tests := []struct {
		name    string
		ledger  string
		changes bool
		args    []string
		code    int
	}{
		{"verify", good, false, []string{"verify"}, 0},
		{"verify json", good, false, []string{"verify", "-json"}, 0},
		{"verify tampered", bad, false, []string{"verify"}, 1},
		{"verify tampered json", bad, false, []string{"verify", "-json"}, 1},
		{"flakes", good, false, []string{"flakes"}, 0},
		{"flakes json", good, false, []string{"flakes", "-json", "-since", "2"}, 0},
		{"flakes of a damaged ledger", bad, false, []string{"flakes"}, 1},
		{"replay of an empty range", good, false, []string{"replay", "-from", "99"}, 1},
		{"retain", good, true, []string{"retain", "-before", "3", "-reason", "old"}, 0},
		{"retain refused", bad, true, []string{"retain", "-before", "2", "-reason", "old"}, 1},
		{"repair", torn, true, []string{"repair"}, 0},
		{"retain refused after a torn line", torn, false, []string{"retain", "-before", "2", "-reason", "x"}, 1},
		{"install of a file", good, false, []string{"install"}, 2},
		{"unknown command", good, false, []string{"nope"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var outs []processOutput
			for _, procs := range []int{1, 4} {
				path := tc.ledger
				if tc.changes {
					path = fresh(path)
				}
				o := run(procs, append(tc.args, "-ledger", path)...)
				// The ledger's path is the one input that differs between
				// copies.
				o.stdout = strings.ReplaceAll(o.stdout, path, "LEDGER")
				o.stderr = strings.ReplaceAll(o.stderr, path, "LEDGER")
				outs = append(outs, o)
			}
			require.Equal(t, tc.code, outs[0].code, "%+v", outs[0])
			require.Equal(t, outs[0], outs[1])
		})
	}
}
