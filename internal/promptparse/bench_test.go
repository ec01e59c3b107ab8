package promptparse_test

import (
	"testing"

	"github.com/codegenie/codegenie/internal/promptparse"
	"github.com/codegenie/codegenie/internal/prompttest"
)

func BenchmarkParse(b *testing.B) {
	u := prompttest.Build(b, prompttest.Realistic()).User
	b.SetBytes(int64(len(u)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := promptparse.Parse(u); err != nil {
			b.Fatal(err)
		}
	}
}
