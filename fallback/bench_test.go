package fallback_test

import (
	"context"
	"testing"

	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// BenchmarkTierRun measures one full Tier.Run (retrieval over the seeded
// store, prompt, the real Anthropic SDK over the in-process fakellm
// transport, canonical diff) per fixture scenario and path.
func BenchmarkTierRun(b *testing.B) {
	for _, s := range fixtures.Scenarios() {
		for _, path := range []struct {
			name  string
			prior []fallback.AttemptSummary
		}{{"happy", nil}, {"retry", s.Prior}} {
			b.Run(s.Name+"/"+path.name, func(b *testing.B) {
				tier := fakeTier(b, fakellm.Normal, false)
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := tier.Run(ctx, s.Advisory, s.Repo, s.Recipe, path.prior); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkSnapshotSHA(b *testing.B) {
	s := scenario(b, "go-xnet")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Repo.SnapshotSHA(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalize(b *testing.B) {
	repo := fallback.RepoContext{Files: shopRepo()}
	diff := []byte(lodashBumps[0].diff)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fallback.Canonicalize(repo, diff); err != nil {
			b.Fatal(err)
		}
	}
}
