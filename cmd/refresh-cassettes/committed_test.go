package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "re-record the committed cassettes in cassettes/testdata against fakellm")

// committedDir holds the cassettes the gate replays.
var committedDir = filepath.Join("..", "..", "cassettes", "testdata")

// TestCommittedCassettes proves the committed cassettes are exactly what
// refresh-cassettes records against internal/fakellm today: recording is
// deterministic (redaction normalises everything volatile), so any
// difference means the pipeline's requests changed and the cassettes (and
// goldens) are stale. With -update it re-records them in place, through
// the same command code.
func TestCommittedCassettes(t *testing.T) {
	base, cfg := fakeAPI(t)
	if *update {
		stdout, stderr, code := runCmd(t, cfg, "-dir", committedDir, "-base-url", base, "-force", "-reason", "re-recorded against internal/fakellm (go test ./cmd/refresh-cassettes -run TestCommittedCassettes -update)")
		require.Equal(t, 0, code, stderr)
		t.Log(stdout)
	}
	require.NoError(t, cassettes.Verify(committedDir, cassettes.VerifyOptions{}))

	dir := t.TempDir()
	_, stderr, code := runCmd(t, cfg, "-dir", dir, "-base-url", base)
	require.Equal(t, 0, code, stderr)
	for _, tg := range targets() {
		want, err := os.ReadFile(filepath.Join(committedDir, tg.file))
		require.NoError(t, err, "missing committed cassette; record it with: go test ./cmd/refresh-cassettes -run TestCommittedCassettes -update")
		got, err := os.ReadFile(filepath.Join(dir, tg.file))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got),
			"%s is stale: the pipeline's requests changed. Re-record with: go test ./cmd/refresh-cassettes -run TestCommittedCassettes -update, then refresh the goldens: go test ./properties/ -run Golden -update", tg.file)
	}
}
