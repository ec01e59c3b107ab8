package review

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// text draws a short text from a small vocabulary, so that two draws
// share words.
func text() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		ws := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "cc", "déjà", "\n", " ", "  ", "x."}), 0, 30).Draw(t, "words")
		return strings.Join(ws, rapid.SampledFrom([]string{"", " "}).Draw(t, "sep"))
	})
}

// sides rebuilds the old and the new text from a diff.
func sides(spans []Span) (string, string) {
	var a, b strings.Builder
	for _, s := range spans {
		if s.Op != "+" {
			a.WriteString(s.Text)
		}
		if s.Op != "-" {
			b.WriteString(s.Text)
		}
	}
	return a.String(), b.String()
}

func TestWordDiffRebuildsBothTexts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := text().Draw(t, "old"), text().Draw(t, "new")
		spans := wordDiff(a, b)
		if a == b {
			require.Nil(t, spans)
			return
		}
		ga, gb := sides(spans)
		require.Equal(t, a, ga)
		require.Equal(t, b, gb)
		for i := 1; i < len(spans); i++ {
			require.NotEqual(t, spans[i-1].Op, spans[i].Op, "adjacent spans of one op are merged")
			require.False(t, spans[i-1].Op == "+" && spans[i].Op == "-", "removals come before additions")
		}
	})
}

func TestWordDiff(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       []Span
	}{
		{"a word replaced", "the quick fox", "the slow fox", []Span{{Op: "=", Text: "the "}, {Op: "-", Text: "quick"}, {Op: "+", Text: "slow"}, {Op: "=", Text: " fox"}}},
		{"a word added", "one two", "one and two", []Span{{Op: "=", Text: "one"}, {Op: "+", Text: " and"}, {Op: "=", Text: " two"}}},
		{"all new", "", "hi", []Span{{Op: "+", Text: "hi"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wordDiff(tt.a, tt.b)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestWordDiffElidesLongUnchangedStretches(t *testing.T) {
	same := strings.Repeat("word ", 400)
	spans := wordDiff(same+"old", same+"new")
	require.Len(t, spans, 3)
	require.Equal(t, "=", spans[0].Op)
	require.Equal(t, len(same), len(spans[0].Text)-len("…")+spans[0].Elided)
	require.Contains(t, spans[0].Text, "…")
}

// TestWordDiffOfLargeTexts: texts of 40,000 words each, wholly different
// or differing in a few words, diff word by word (an O(n*m) table would
// hold 1.6e9 cells) and rebuild both sides.
func TestWordDiffOfLargeTexts(t *testing.T) {
	const n = 20000
	var a, b, c strings.Builder
	for i := range n {
		a.WriteString("a" + strings.Repeat("x", i%7) + " ")
		b.WriteString("b" + strings.Repeat("y", i%5) + " ")
		if i%5000 == 0 {
			c.WriteString("changed ")
		} else {
			c.WriteString("a" + strings.Repeat("x", i%7) + " ")
		}
	}
	for _, other := range []string{b.String(), c.String()} {
		spans := wordDiff(a.String(), other)
		ga, gb := sides(spans)
		require.Equal(t, len(a.String()), len(ga)-strings.Count(ga, "…")*len("…")+elided(spans))
		require.Equal(t, len(other), len(gb)-strings.Count(gb, "…")*len("…")+elided(spans))
	}
	spans := wordDiff(a.String(), c.String())
	changes := 0
	for _, s := range spans {
		if s.Op == "+" {
			changes++
			require.Equal(t, "changed", strings.TrimSpace(s.Text), "only the changed words differ")
		}
	}
	require.Equal(t, 4, changes)
}

func elided(spans []Span) int {
	n := 0
	for _, s := range spans {
		n += s.Elided
	}
	return n
}
