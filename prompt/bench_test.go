package prompt_test

import (
	"testing"

	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

func BenchmarkBuild(b *testing.B) {
	in := prompttest.Realistic()
	p := prompttest.Build(b, in)
	b.SetBytes(int64(len(p.User)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (prompt.Builder{}).Build(in); err != nil {
			b.Fatal(err)
		}
	}
}
