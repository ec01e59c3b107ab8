package ledger_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// TestCommittedLedgers: the ledgers under testdata verify with no problem
// and no warning, before and after this version appends to them, and
// every entry read back encodes to its stored line byte for byte.
// schema1.jsonl was written by the harness's -gate.ledger before a gate's
// outcome had one definition (gate.Outcome): verdicts with zero chain
// digests, an error class, components, evidence, revision and CI job, a
// rerun and a retention; schema1-reruns.jsonl, by the same code, three
// verdicts and their reruns. schema2.jsonl was written by gate-merge -ledger
// from the result files of real gates: the whole outcome, with
// explanations, commands and classes in full.
func TestCommittedLedgers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 3, "schema1.jsonl, schema1-reruns.jsonl and schema2.jsonl")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			committed, err := os.ReadFile(f)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "ledger.jsonl")
			require.NoError(t, os.WriteFile(path, committed, 0o644))
			s := open(t, path, &clock{})
			rep := verifyOK(t, s)
			require.Empty(t, rep.Warnings)
			lines := bytes.Split(bytes.TrimSuffix(committed, []byte("\n")), []byte("\n"))
			i := 0
			require.NoError(t, s.Entries(context.Background(), 0, 0, func(e ledger.Entry) error {
				b, err := e.Canonical()
				require.NoError(t, err)
				require.Equal(t, string(lines[i]), string(b), "entry %d reads back as it is stored", e.Seq)
				i++
				return nil
			}))
			require.Len(t, lines, i)
			fill(t, s, 1)
			rep = verifyOK(t, s)
			require.Empty(t, rep.Warnings, "schemas 1 and 2 side by side are what an upgrade leaves")
			require.Equal(t, len(lines)+1, rep.Entries)
		})
	}
}
