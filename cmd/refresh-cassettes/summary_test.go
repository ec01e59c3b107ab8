package main

import (
	"testing"

	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/stretchr/testify/require"
)

// TestCounts: the summary's counts come from the review's pairs: one per
// change kind, the new cassette's interactions and first model, and a
// text change when a pair's texts differ or a response with text was
// added or removed.
func TestCounts(t *testing.T) {
	msg := func(model, text string) *review.Message { return &review.Message{Model: model, Text: text} }
	tests := []struct {
		name string
		in   []review.Interaction
		want cassetteCounts
	}{
		{"same", []review.Interaction{{Change: "unchanged", Before: msg("m1", "x"), After: msg("m1", "x")}},
			cassetteCounts{interactions: 1, changes: map[string]int{"unchanged": 1}, model: "m1"}},
		{"text differs", []review.Interaction{
			{Change: "changed", Before: msg("", "x"), After: msg("", "y"), TextDiff: []review.Span{{Op: "-", Text: "x"}, {Op: "+", Text: "y"}}},
			{Change: "changed", Before: msg("m0", "z"), After: msg("m2", "z")}},
			cassetteCounts{interactions: 2, changes: map[string]int{"changed": 2}, model: "m2", textChanged: true}},
		{"added with text", []review.Interaction{{Change: "added", After: msg("m", "new")}},
			cassetteCounts{interactions: 1, changes: map[string]int{"added": 1}, model: "m", textChanged: true}},
		{"removed with text", []review.Interaction{{Change: "removed", Before: msg("m", "old")}},
			cassetteCounts{changes: map[string]int{"removed": 1}, textChanged: true}},
		{"removed without text", []review.Interaction{{Change: "removed", Before: msg("m", "")}},
			cassetteCounts{changes: map[string]int{"removed": 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, counts(review.Cassette{Interactions: tt.in}))
		})
	}
}
