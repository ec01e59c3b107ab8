package main

import (
	"path/filepath"
	"testing"
)

// BenchmarkAppendVerdict is what -ledger adds to a merge per verdict with
// the embedded store: the entry built from the result, the ledger opened,
// one durable append (lock, write, fsync), closed.
func BenchmarkAppendVerdict(b *testing.B) {
	dsn := filepath.Join(b.TempDir(), "ledger.jsonl")
	rs := ledgerResults()[:1]
	rs[0].Components = map[string]string{"cassette_id": "c1", "store_digest": "s1", "repo_snapshot_sha": "r1", "embedding_model_digest": "e1", "config": "f1"}
	for b.Loop() {
		if err := appendVerdicts(b.Context(), dsn, rs, noEnv); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/verdict")
}
