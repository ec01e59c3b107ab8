package ledger_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// TestEmbeddedAcrossProcesses: appenders in separate processes (this test
// binary rerun as a helper) serialise on the file lock.
func TestEmbeddedAcrossProcesses(t *testing.T) {
	t.Parallel()
	if path := os.Getenv("LEDGER_TEST_APPEND"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("LEDGER_TEST_N"))
		s, err := ledger.Open(context.Background(), path)
		require.NoError(t, err)
		for i := range n {
			e := verdict(os.Getenv("LEDGER_TEST_WRITER"), ledger.Pass)
			e.Runs = i + 1
			_, err := s.Append(context.Background(), e)
			require.NoError(t, err)
		}
		return
	}
	const procs, each = 4, 100
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEmbeddedAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LEDGER_TEST_APPEND="+path, "LEDGER_TEST_N="+strconv.Itoa(each), fmt.Sprintf("LEDGER_TEST_WRITER=p%d", p))
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		require.NoError(t, cmd.Wait())
	}
	s := open(t, path, &clock{})
	rep := verifyOK(t, s)
	require.Equal(t, procs*each, rep.Entries)
	next := map[string]int{}
	for _, e := range all(t, s) {
		next[e.Scenario]++
		require.Equal(t, next[e.Scenario], e.Runs)
	}
	require.Len(t, next, procs)
}
