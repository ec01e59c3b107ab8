package rag

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestHashEmbedderDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		texts := rapid.SliceOfN(rapid.String(), 1, 5).Draw(t, "texts")
		cfg := HashEmbedderConfig{
			Dimensions: rapid.IntRange(1, 512).Draw(t, "dimensions"),
			NGram:      rapid.IntRange(1, MaxNGram).Draw(t, "ngram"),
			Seed:       rapid.Uint64().Draw(t, "seed"),
		}
		a, b := mustHash(t, cfg), mustHash(t, cfg)
		va, err := a.Embed(context.Background(), texts)
		require.NoError(t, err)
		vb, err := b.Embed(context.Background(), texts)
		require.NoError(t, err)
		require.Equal(t, va, vb)
		// Embedding one text alone gives the same vector as in a batch.
		i := rapid.IntRange(0, len(texts)-1).Draw(t, "single")
		one, err := a.Embed(context.Background(), texts[i:i+1])
		require.NoError(t, err)
		require.Equal(t, va[i], one[0])
	})
}

func TestHashEmbedderUnitNorm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.String().Draw(t, "text")
		h := mustHash(t, HashEmbedderConfig{Dimensions: rapid.IntRange(1, 300).Draw(t, "dimensions")})
		v, err := h.Embed(context.Background(), []string{text})
		require.NoError(t, err)
		require.Len(t, v[0], h.Dimensions())
		var sq float64
		for _, x := range v[0] {
			sq += float64(x * x)
		}
		if !hasToken(text) {
			require.Zero(t, sq, "a text without tokens must embed to the zero vector")
			return
		}
		if sq == 0 {
			return // signed features can cancel exactly (always possible with 1 dimension)
		}
		require.InDelta(t, 1.0, math.Sqrt(sq), 1e-12)
	})
}

// hasToken reports whether text holds a token per the doc.go rules.
func hasToken(text string) bool {
	for _, r := range text {
		if ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') || r >= 0x80 {
			return true
		}
	}
	return false
}

func TestHashEmbedderTokenisation(t *testing.T) {
	h := mustHash(t, HashEmbedderConfig{})
	embed := func(s string) []float64 {
		t.Helper()
		v, err := h.Embed(context.Background(), []string{s})
		require.NoError(t, err)
		return v[0]
	}
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{name: "ASCII case folds", a: "Prototype POLLUTION", b: "prototype pollution", same: true},
		{name: "punctuation and space separate alike", a: "lodash: <4.17.21>", b: "lodash 4 17 21", same: true},
		{name: "non-ASCII is not folded", a: "ÉCOLE", b: "école", same: false},
		{name: "different words differ", a: "redos", b: "overflow", same: false},
		{name: "word order does not matter", a: "path traversal", b: "traversal path", same: true},
		{name: "invalid UTF-8 is U+FFFD", a: "a\xffb", b: "a\uFFFDb", same: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.same {
				require.Equal(t, embed(tc.a), embed(tc.b))
			} else {
				require.NotEqual(t, embed(tc.a), embed(tc.b))
			}
		})
	}
	require.Equal(t, make([]float64, DefaultDimensions), embed(" \t-- !"), "no tokens: zero vector")
}

func TestHashEmbedderSimilarity(t *testing.T) {
	h := mustHash(t, HashEmbedderConfig{})
	v, err := h.Embed(context.Background(), []string{
		"npm lodash prototype pollution in zipObjectDeep",
		"npm lodash prototype pollution via merge",
		"PyPI requests proxy authorization header leak on redirect",
	})
	require.NoError(t, err)
	near, err := Cosine(v[0], v[1])
	require.NoError(t, err)
	far, err := Cosine(v[0], v[2])
	require.NoError(t, err)
	require.Greater(t, near, far, "related advisories must score higher than unrelated ones")
}

func TestHashEmbedderDigestCoversEveryParameter(t *testing.T) {
	base := HashEmbedderConfig{Dimensions: 64, NGram: 3, Seed: 7}
	d0 := mustHash(t, base).Digest()
	// Perturb every field by reflection, so a field added later without
	// being put into the digest fails this test.
	typ := reflect.TypeFor[HashEmbedderConfig]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			cfg := base
			fv := reflect.ValueOf(&cfg).Elem().Field(i)
			switch fv.Kind() {
			case reflect.Int:
				fv.SetInt(fv.Int() + 1)
			case reflect.Uint64:
				fv.SetUint(fv.Uint() + 1)
			default:
				t.Fatalf("field %s of kind %s: teach this test to perturb it", f.Name, fv.Kind())
			}
			require.NotEqual(t, d0, mustHash(t, cfg).Digest(), "digest ignores %s", f.Name)
		})
	}
	require.Equal(t, d0, mustHash(t, base).Digest(), "digest must be stable")
	require.Equal(t, mustHash(t, HashEmbedderConfig{}).Digest(),
		mustHash(t, HashEmbedderConfig{Dimensions: DefaultDimensions, NGram: DefaultNGram}).Digest(),
		"zero value and explicit defaults are the same embedder")
	require.NotEqual(t, mustHash(t, base).Digest(), (&OpenAIEmbedder{Model: "m", Dims: 64}).Digest())
}

func TestHashEmbedderConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  HashEmbedderConfig
		ok   bool
	}{
		{name: "zero value", cfg: HashEmbedderConfig{}, ok: true},
		{name: "one dimension", cfg: HashEmbedderConfig{Dimensions: 1}, ok: true},
		{name: "max dimensions", cfg: HashEmbedderConfig{Dimensions: MaxDimensions}, ok: true},
		{name: "too many dimensions", cfg: HashEmbedderConfig{Dimensions: MaxDimensions + 1}},
		{name: "negative dimensions", cfg: HashEmbedderConfig{Dimensions: -1}},
		{name: "max ngram", cfg: HashEmbedderConfig{NGram: MaxNGram}, ok: true},
		{name: "ngram too long", cfg: HashEmbedderConfig{NGram: MaxNGram + 1}},
		{name: "negative ngram", cfg: HashEmbedderConfig{NGram: -3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHashEmbedder(tc.cfg)
			if tc.ok {
				require.NoError(t, err)
				require.NotNil(t, h)
				return
			}
			require.ErrorIs(t, err, ErrBadConfig)
			require.Nil(t, h)
		})
	}
}

func TestHashEmbedderContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mustHash(t, HashEmbedderConfig{}).Embed(ctx, []string{"x"})
	require.ErrorIs(t, err, context.Canceled)
}

// TestHashEmbedderKnownVector pins the algorithm in doc.go: it recomputes a
// tiny embedding by hand from the spec, independently of embed.
func TestHashEmbedderKnownVector(t *testing.T) {
	const dims = 16
	h := mustHash(t, HashEmbedderConfig{Dimensions: dims, NGram: 3, Seed: 1})
	got, err := h.Embed(context.Background(), []string{"Ab"})
	require.NoError(t, err)

	// Features of token "ab": "wab", and windows of "<ab>": "c<ab", "cab>".
	want := make([]float64, dims)
	for _, f := range []string{"wab", "c<ab", "cab>"} {
		x := uint64(14695981039346656037)
		for _, c := range append([]byte{1, 0, 0, 0, 0, 0, 0, 0}, f...) {
			x ^= uint64(c)
			x *= 1099511628211
		}
		x ^= x >> 30
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 27
		x *= 0x94d049bb133111eb
		x ^= x >> 31
		if x>>63 == 1 {
			want[x%dims]--
		} else {
			want[x%dims]++
		}
	}
	var sq float64
	for _, x := range want {
		sq += float64(x * x)
	}
	for i := range want {
		want[i] /= math.Sqrt(sq)
	}
	require.Equal(t, want, got[0])
}
