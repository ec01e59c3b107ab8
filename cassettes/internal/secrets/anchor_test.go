package secrets

import (
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genContext draws text around a secret: separators, keywords, case and
// Unicode variants of letters (K KELVIN SIGN, ſ LONG S, İ), other
// multi-byte runes and, now and then, an invalid byte.
func genContext(t *rapid.T, label string, keywords []string) string {
	parts := rapid.SliceOfN(rapid.OneOf(
		rapid.SampledFrom([]string{" ", "\n", "\t", "\"", "'", ":", "=", ": ", "=\"", ",", ".", "-", "_", "/", "@", "\\n",
			"KEY", "\u212a", "ſ", "İ", "é", "中", "😀", "\xff", "x", "Z9", "0123456789abcdef", "https://", "curl -H "}),
		rapid.SampledFrom(keywords),
		rapid.StringMatching(`[A-Za-z0-9+/=_.-]{1,40}`),
	), 0, 6).Draw(t, label)
	return strings.Join(parts, "")
}

func allKeywords(rs *ruleset) []string { return rs.keywords.words }

// TestEveryRuleScansAsTheWholeText: for every rule, texts holding strings
// its expression generates, in varied context, scan alike with and
// without the keyword windows and anchors; and the reference finds
// something for nearly every rule, so the comparison covers them.
func TestEveryRuleScansAsTheWholeText(t *testing.T) {
	t.Parallel()
	rs, err := load()
	require.NoError(t, err)
	kws := allKeywords(rs)
	var mu sync.Mutex
	found := map[string]bool{}
	checks := 0
	// The rules' checks run side by side; the group returns when all
	// have.
	t.Run("rules", func(t *testing.T) {
		for _, r := range rs.Rules {
			if r.re == nil {
				continue
			}
			checks++
			t.Run(r.ID, func(t *testing.T) {
				t.Parallel()
				rapid.Check(t, func(t *rapid.T) {
					secret := rapid.StringMatching(r.Regex).Draw(t, "secret")
					text := genContext(t, "before", kws) + secret + genContext(t, "after", kws)
					if rapid.Bool().Draw(t, "twice") {
						text += genContext(t, "between", kws) + secret
					}
					want := scan(text, false)
					require.Equal(t, want, scan(text, true), "%q", text)
					requireAnchoredMatchesAsWhole(t, rs, text)
					for _, f := range want {
						if f.Rule == r.ID {
							mu.Lock()
							found[r.ID] = true
							mu.Unlock()
						}
					}
				})
			})
		}
	})
	missing := []string{}
	for _, r := range rs.Rules {
		if r.re != nil && !found[r.ID] {
			missing = append(missing, r.ID)
		}
	}
	t.Logf("%d of %d rules found in generated texts; never: %v", checks-len(missing), checks, missing)
	require.LessOrEqual(t, len(missing), checks/10, "rules the generated texts never trigger: %v", missing)
}

// requireAnchoredMatchesAsWhole fails unless, for every rule with an
// anchor, the matches found from its keywords' windows are those of the
// expression over the whole text, before any filter.
func requireAnchoredMatchesAsWhole(t require.TestingT, rs *ruleset, text string) {
	if !utf8.ValidString(text) || strings.ContainsFunc(text, func(r rune) bool { return foldOnly[r] }) {
		return
	}
	occ := rs.keywords.find(text)
	for _, r := range rs.Rules {
		if r.anch == nil || !slices.ContainsFunc(r.ids, occ.has) {
			continue
		}
		require.Equal(t, r.re.FindAllStringIndex(text, -1), r.anch.matches(text, r.anch.windows(text, occ, r.ids)), "rule %s in %q", r.ID, text)
	}
}

// TestAnchorsCoverUnboundedRules: every rule whose matches have no length
// bound runs only near its keywords.
func TestAnchorsCoverUnboundedRules(t *testing.T) {
	t.Parallel()
	rs, err := load()
	require.NoError(t, err)
	for _, r := range rs.Rules {
		if r.re != nil && r.maxLen < 0 {
			require.NotNil(t, r.anch, r.ID)
		}
	}
}

func TestAnchorOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr string
		words      []string
		ok         bool
		before, e  int
	}{
		{"literal prefix", `\bsk-ant-[a-z]{16,}`, []string{"sk-ant-"}, true, 0, 0},
		{"keyword across elements", `\bEAA[MC][a-z]{100,}`, []string{"eaam", "eaac"}, true, 0, 0},
		{"case-insensitive", `(?i)xapp-\d+`, []string{"xapp"}, true, 0, 0},
		{"bounded prefix", `[a-z]{0,5}?(?:key|token)=\w+`, []string{"key", "token"}, true, 20, 0},
		{"unbounded prefix", `https://[a-z]+\.hook\.com/\w+`, []string{"hook.com"}, true, -1, 1},
		{"keyword after an optional part", `(?:abc)?def\w+`, []string{"abc"}, false, 0, 0},
		{"keyword in one alternative only", `(?:key|foo)\w+`, []string{"key"}, false, 0, 0},
		{"keyword after a star", `.*key`, []string{"key"}, true, -1, 0},
		{"keyword inside a star", `(?:key)*x`, []string{"key"}, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re, err := syntax.Parse(tt.expr, syntax.Perl)
			require.NoError(t, err)
			a, ok := anchorOf(re, tt.words)
			require.Equal(t, tt.ok, ok)
			if ok {
				require.Equal(t, tt.before, a.before)
				require.Equal(t, tt.e, a.e)
			}
		})
	}
}

// TestHasFoldOnly: hasFoldOnly agrees with a rune-by-rune search, and
// every rune of foldOnly is above ASCII (which it relies on).
func TestHasFoldOnly(t *testing.T) {
	t.Parallel()
	for r := range foldOnly {
		require.GreaterOrEqual(t, r, rune(utf8.RuneSelf), "%q", r)
	}
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.StringOf(rapid.SampledFrom([]rune("aKk\u212a\u017fsé😀 \u00c5\u212b"))).Draw(t, "text")
		want := strings.ContainsFunc(text, func(r rune) bool { return foldOnly[r] })
		require.Equal(t, want, hasFoldOnly(text), "%q", text)
	})
}
