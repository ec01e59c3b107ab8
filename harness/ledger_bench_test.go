package harness

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codegenie/codegenie/events"
)

// BenchmarkAppendToLedger is what -gate.ledger adds to each Check with the
// embedded store: the entry built from the report, the ledger opened, one
// durable append (lock, write, fsync), closed.
func BenchmarkAppendToLedger(b *testing.B) {
	dsn := filepath.Join(b.TempDir(), "ledger.jsonl")
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	out, tape := events.Sum([]byte("out")), events.Sum([]byte("tape"))
	rep := &Report{
		Scenario: "npm", Test: "TestGate/npm", Dir: wd, Verdict: Pass, Runs: 50, Key: "k",
		Pin:          map[string]string{"cassette_id": "c1", "store_digest": "s1", "repo_snapshot_sha": "r1", "embedding_model_digest": "e1", "config": "f1"},
		OutputDigest: out, ChainDigest: tape,
		Classes: []Class{{Size: 50, OutputDigest: out, ChainDigest: tape}},
	}
	for b.Loop() {
		if err := appendToLedger(b.Context(), dsn, rep); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/check")
}
