package guard_test

import (
	"testing"

	"github.com/codegenie/codegenie/guard"
)

// BenchmarkIDSource measures one deterministic ID, as the recorder draws one
// per event.
func BenchmarkIDSource(b *testing.B) {
	next := guard.IDSource("codegenie-runkey-0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		_ = next()
	}
}
