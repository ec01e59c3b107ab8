package ledger_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// TestSchema1RerunsRead: testdata/schema1-reruns.jsonl was written by the
// version before reruns were called so (three verdicts, then a rerun of
// each, stored as kind "replay" with members replays and replay). It
// verifies; its reruns read as reruns and are not tallied as verdicts;
// rerunning it again skips them; and the reruns this version appends are
// stored with the same kind and members, so the ledger stays one schema
// that every version reads.
func TestSchema1RerunsRead(t *testing.T) {
	ctx := context.Background()
	old, err := os.ReadFile(filepath.Join("testdata", "schema1-reruns.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	require.NoError(t, os.WriteFile(path, old, 0o644))
	s := open(t, path, &clock{})
	verifyOK(t, s)

	entries := all(t, s)
	require.Len(t, entries, 6)
	for i, e := range entries[3:] {
		require.Equal(t, ledger.KindRerun, e.Kind)
		require.Equal(t, uint64(i+1), e.RerunOf)
		require.NotNil(t, e.Rerun)
	}
	require.Equal(t, []string{ledger.StatusSame, ledger.StatusDiverged, ledger.StatusError},
		[]string{entries[3].Rerun.Status, entries[4].Rerun.Status, entries[5].Rerun.Status})

	flakes, err := s.Flakes(ctx, 0)
	require.NoError(t, err)
	n := 0
	for _, f := range flakes.Flakes {
		for _, v := range f.Verdicts {
			n += v.Count
		}
	}
	require.Equal(t, 3, n, "the reruns are not verdicts of the gate")

	same := func(ctx context.Context, rec ledger.Entry) (ledger.Entry, error) { return rec, nil }
	rep, err := s.Rerun(ctx, ledger.RerunConfig{From: 1, Evaluate: same})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Skipped)
	require.Equal(t, 3, rep.Same)
	var text bytes.Buffer
	require.NoError(t, rep.Text(&text))
	require.Contains(t, text.String(), "seq 4 npm/happy: skipped (rerun entry)\n")
	require.Contains(t, text.String(), "[rerun entry 7]")
	verifyOK(t, s)

	now, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(now, old), "nothing stored before is changed")
	lines := strings.Split(strings.TrimSuffix(string(now), "\n"), "\n")
	require.Len(t, lines, 9)
	for _, l := range lines[6:] {
		require.Contains(t, l, `"kind":"replay"`)
		require.Contains(t, l, `"replay":{"status":"same"}`)
		require.Contains(t, l, `"replays":`)
	}
}
