package review_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes/review"
)

func TestDefaultPrices(t *testing.T) {
	p := review.DefaultPrices()
	require.Equal(t, "USD", p.Currency)
	require.Equal(t, "built-in as of 2026-11-28", p.Source)
	m, ok := p.Lookup("claude-sonnet-4-5-20250929")
	require.True(t, ok)
	require.Equal(t, review.ModelPrice{Model: "claude-sonnet-4-5", Input: 3_000_000, Output: 15_000_000, CacheRead: 300_000, CacheWrite: 3_750_000}, m)
}

// TestDefaultPricesSayWhatWasChecked: the built-in table marks every
// price it could not check against the provider's published page, with
// a reason; the ones it checked are these.
func TestDefaultPricesSayWhatWasChecked(t *testing.T) {
	var confirmed []string
	for _, m := range review.DefaultPrices().Models {
		if m.Unconfirmed == "" {
			confirmed = append(confirmed, m.Model)
			continue
		}
		require.NotContains(t, m.Unconfirmed, "\n", m.Model)
	}
	require.Equal(t, []string{
		"claude-opus-4-5", "claude-opus-4-1", "claude-opus-4", "claude-sonnet-4-5", "claude-sonnet-4", "claude-3-7-sonnet",
		"claude-haiku-4-5", "claude-3-5-haiku", "claude-3-5-sonnet", "claude-3-haiku",
		"gpt-5.1", "gpt-5-mini", "gpt-5-nano",
	}, confirmed)
	m, ok := review.DefaultPrices().Lookup("gemini-2.5-flash")
	require.True(t, ok)
	require.Contains(t, m.Unconfirmed, "pricing page", "a block's reason is its models'")
}

func TestLookupPrefersTheLongestEntry(t *testing.T) {
	p := review.DefaultPrices()
	tests := []struct{ model, want string }{
		{"gpt-4o", "gpt-4o"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"gpt-5-mini", "gpt-5-mini"},
		{"claude-opus-4-1-20250805", "claude-opus-4-1"},
		{"claude-opus-4-20250514", "claude-opus-4"},
		{"gemini-2.5-flash-lite", "gemini-2.5-flash-lite"},
		{"gpt-5.1-2025-11-13", "gpt-5.1"},
		{"gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"},
		{"o4-mini-2025-04-16", "o4-mini"},
		// Bedrock model ids: an inference profile's region, the provider.
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"},
		{"eu.amazon.nova-pro-v1:0", "amazon.nova-pro"},
		{"global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			m, ok := p.Lookup(tt.model)
			require.True(t, ok)
			require.Equal(t, tt.want, m.Model)
		})
	}
	_, ok := p.Lookup("gpt-4omni")
	require.False(t, ok, "a prefix counts only before a dash")
	_, ok = p.Lookup("")
	require.False(t, ok)
	_, ok = p.Lookup("x.gpt-4omni")
	require.False(t, ok, "a label is dropped only to find an entry")
	_, ok = p.Lookup("US.anthropic.claude-sonnet-4-5")
	require.False(t, ok, "only labels of lowercase letters and dashes are dropped")
	_, ok = p.Lookup("gpt-4.1x")
	require.False(t, ok, "a label with a digit is part of the name")
}

func TestCost(t *testing.T) {
	m := review.ModelPrice{Input: 3_000_000, Output: 15_000_000, CacheRead: 300_000, CacheWrite: 3_750_000}
	// 1000 input tokens at $3/M = $0.003; 100 output at $15/M = $0.0015;
	// 10 cache reads at $0.30/M = $0.000003; 1 write at $3.75/M = $0.00000375.
	require.Equal(t, int64(3000+1500+3+3), m.Cost(review.Usage{Input: 1000, Output: 100, CacheRead: 10, CacheWrite: 1}))
	require.Equal(t, int64(math.MaxInt64), m.Cost(review.Usage{Input: math.MaxInt64, Output: math.MaxInt64}))
	require.Zero(t, m.Cost(review.Usage{Input: -5}))
}

func TestReadPrices(t *testing.T) {
	write := func(t *testing.T, s string) string {
		p := filepath.Join(t.TempDir(), "prices.json")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	good := `{"format":1,"currency":"EUR","unit":"per million tokens","models":[{"model":"m","input":0.075,"output":1e1}]}`
	p, err := review.ReadPrices(write(t, good))
	require.NoError(t, err)
	require.Equal(t, []review.ModelPrice{{Model: "m", Input: 75_000, Output: 10_000_000}}, p.Models)
	require.Equal(t, "EUR", p.Currency)

	blocks := `{"format":2,"currency":"USD","unit":"per million tokens","providers":[
		{"provider":"A","page":"https://a.example/pricing","read":"2026-11-28","models":[{"model":"a1","input":1},{"model":"a2","input":2,"unconfirmed":"not on the page"}]},
		{"provider":"B","page":"https://b.example/pricing","read":"2026-11-28","unconfirmed":"page unreadable","models":[{"model":"b1","output":3}]}]}`
	p, err = review.ReadPrices(write(t, blocks))
	require.NoError(t, err)
	require.Equal(t, []review.ModelPrice{{Model: "a1", Input: 1_000_000}, {Model: "a2", Input: 2_000_000, Unconfirmed: "not on the page"},
		{Model: "b1", Output: 3_000_000, Unconfirmed: "page unreadable"}}, p.Models)

	block := func(fields string) string {
		return `{"format":2,"unit":"per million tokens","providers":[{` + fields + `}]}`
	}
	bad := []struct{ name, text, says string }{
		{"no page", block(`"provider":"A","read":"2026-11-28","models":[]`), "is not an https address"},
		{"http page", block(`"provider":"A","page":"http://a.example","read":"2026-11-28","models":[]`), "is not an https address"},
		{"no read date", block(`"provider":"A","page":"https://a.example","models":[]`), "is not a date"},
		{"read not a date", block(`"provider":"A","page":"https://a.example","read":"yesterday","models":[]`), "is not a date"},
		{"no provider", block(`"page":"https://a.example","read":"2026-11-28","models":[]`), "no provider"},
		{"empty reason", block(`"provider":"A","page":"https://a.example","read":"2026-11-28","unconfirmed":" ","models":[]`), "say why"},
		{"reason of two lines", block(`"provider":"A","page":"https://a.example","read":"2026-11-28","models":[{"model":"m","unconfirmed":"a\nb"}]`), "one line"},
		{"unknown block field", block(`"provider":"A","page":"https://a.example","read":"2026-11-28","modles":[]`), "unknown field"},
		{"repeated across blocks", `{"format":2,"unit":"per million tokens","providers":[
			{"provider":"A","page":"https://a.example","read":"2026-11-28","models":[{"model":"m"}]},
			{"provider":"B","page":"https://b.example","read":"2026-11-28","models":[{"model":"m"}]}]}`, "repeated model"},
		{"models in format 2", `{"format":2,"unit":"per million tokens","models":[]}`, `not in "models"`},
		{"providers in format 1", `{"format":1,"unit":"per million tokens","providers":[]}`, `not "providers"`},
		{"unconfirmed in format 1", `{"format":1,"unit":"per million tokens","models":[{"model":"m","unconfirmed":"x"}]}`, "a field of format 2"},
		{"too precise", `{"format":1,"unit":"per million tokens","models":[{"model":"m","input":0.0000001}]}`, "more than 6 decimals"},
		{"negative", `{"format":1,"unit":"per million tokens","models":[{"model":"m","input":-1}]}`, "not a non-negative number"},
		{"unknown field", `{"format":1,"unit":"per million tokens","models":[{"model":"m","inptu":1}]}`, "unknown field"},
		{"repeated model", `{"format":1,"unit":"per million tokens","models":[{"model":"m"},{"model":"m"}]}`, "repeated model"},
		{"other unit", `{"format":1,"unit":"per token","models":[]}`, "unit"},
		{"other format", `{"format":3,"unit":"per million tokens","models":[]}`, "format 3"},
		{"trailing data", `{"format":1,"unit":"per million tokens","models":[]} {}`, "after the JSON object"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			path := write(t, tt.text)
			_, err := review.ReadPrices(path)
			require.ErrorIs(t, err, review.ErrInvalidPrices)
			require.ErrorContains(t, err, tt.says)
			require.ErrorContains(t, err, path)
		})
	}
	_, err = review.ReadPrices(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, review.ErrInvalidPrices)
}
