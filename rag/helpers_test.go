package rag

import (
	"fmt"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genExample draws a solved example whose fields come from small alphabets,
// so that generated stores share words and tie scores happen.
func genExample() *rapid.Generator[Example] {
	return rapid.Custom(func(t *rapid.T) Example {
		return Example{
			ID:        rapid.StringMatching(`ex-[a-e]{1,3}`).Draw(t, "id"),
			Advisory:  rapid.StringMatching(`(prototype|pollution|redos|overflow|path|traversal|[a-z]{1,6})( (prototype|pollution|redos|[a-z]{1,6})){0,6}`).Draw(t, "advisory"),
			Ecosystem: rapid.SampledFrom([]string{"npm", "Go", "PyPI"}).Draw(t, "ecosystem"),
			Package:   rapid.StringMatching(`[a-z]{1,8}`).Draw(t, "package"),
			Fix:       rapid.StringMatching(`(-[a-z0-9 .]{0,12}\n\+[a-z0-9 .]{0,12}\n)?`).Draw(t, "fix"),
		}
	})
}

// genExampleSet draws examples with distinct IDs.
func genExampleSet(minLen, maxLen int) *rapid.Generator[[]Example] {
	return rapid.SliceOfNDistinct(genExample(), minLen, maxLen, func(e Example) string { return e.ID })
}

// mustStore builds a store from examples, failing t on any Add error. It
// takes rapid.TB (which *testing.T, *testing.B and *rapid.T all satisfy)
// because *rapid.T is not a testing.TB.
func mustStore(t rapid.TB, examples ...Example) *Store {
	t.Helper()
	s := NewStore()
	for _, ex := range examples {
		require.NoError(t, s.Add(ex), "adding %q", ex.ID)
	}
	return s
}

// mustHash returns a HashEmbedder for cfg, failing t on error.
func mustHash(t rapid.TB, cfg HashEmbedderConfig) *HashEmbedder {
	t.Helper()
	h, err := NewHashEmbedder(cfg)
	require.NoError(t, err)
	return h
}

// corpus returns n deterministic, realistic-looking examples across three
// ecosystems.
func corpus(n int) []Example {
	ecos := []struct{ eco, pkg, vuln string }{
		{"npm", "lodash", "prototype pollution in zipObjectDeep allows attackers to modify Object.prototype"},
		{"npm", "minimist", "prototype pollution via constructor and __proto__ keys in argument parsing"},
		{"Go", "golang.org/x/net", "HTTP/2 rapid reset can cause excessive work and denial of service"},
		{"Go", "golang.org/x/crypto", "ssh terrapin prefix truncation attack weakens channel integrity"},
		{"PyPI", "requests", "proxy-authorization header leaked to destination on redirect"},
		{"PyPI", "urllib3", "cookie header not stripped on cross-origin redirects"},
	}
	out := make([]Example, n)
	for i := range out {
		e := ecos[i%len(ecos)]
		out[i] = Example{
			ID:        fmt.Sprintf("ex-%04d", i),
			Advisory:  fmt.Sprintf("%s (variant %d): %s; upgrade to a fixed release %d.%d.%d", e.pkg, i, e.vuln, i%7, i%11, i%5),
			Ecosystem: e.eco,
			Package:   e.pkg,
			Fix:       fmt.Sprintf("--- a/manifest\n+++ b/manifest\n@@ -1 +1 @@\n-%s %d.0.0\n+%s %d.0.1\n", e.pkg, i, e.pkg, i),
		}
	}
	return out
}
