package ledger_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/codegenie/codegenie/ledger"
)

// BenchmarkAppendEmbedded is what the gate pays per scenario with the
// embedded store: one durable append (lock, write, fsync) through a handle
// kept open across scenarios.
func BenchmarkAppendEmbedded(b *testing.B) {
	ctx := context.Background()
	s, err := ledger.Open(ctx, filepath.Join(b.TempDir(), "ledger.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e := verdict("npm", ledger.Pass)
	for b.Loop() {
		if _, err := s.Append(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/append")
}

// BenchmarkAppendEmbeddedFreshHandle opens the ledger for each append, as
// a gate that opens it once per scenario does: the head is read back from
// the end of a file that grows with every iteration.
func BenchmarkAppendEmbeddedFreshHandle(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "ledger.jsonl")
	e := verdict("npm", ledger.Pass)
	for b.Loop() {
		s, err := ledger.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Append(ctx, e); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/append")
}

// BenchmarkVerifyEmbedded verifies a ledger of 2,000 entries.
func BenchmarkVerifyEmbedded(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "ledger.jsonl")
	s, err := ledger.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	for range 2000 {
		if _, err := s.Append(ctx, verdict("npm", ledger.Pass)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		rep, err := s.Verify(ctx)
		if err != nil || rep.Err() != nil {
			b.Fatal(err, rep.Err())
		}
	}
	b.ReportMetric(float64(2000*b.N)/b.Elapsed().Seconds(), "entries/s")
}
