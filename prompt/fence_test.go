package prompt

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestFenceForIsLongerThanEveryRun: the fence is one backtick longer than
// the longest run of backticks in the body, and at least three long.
func TestFenceForIsLongerThanEveryRun(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		body := rapid.SliceOf(rapid.SampledFrom([]byte("`a\n"))).Draw(t, "body")
		longest, run := 0, 0
		for _, c := range body {
			if c == '`' {
				run++
			} else {
				run = 0
			}
			longest = max(longest, run)
		}
		if got, want := fenceFor(body), strings.Repeat("`", max(3, longest+1)); got != want {
			t.Fatalf("fenceFor(%q) = %q, want %q", body, got, want)
		}
	})
}
