package fallback_test

import (
	"fmt"
	"testing"

	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/codegenie/codegenie/rag"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// keyComponents draws the five components of a RunKey.
func keyComponents() *rapid.Generator[[5]string] {
	return rapid.Custom(func(t *rapid.T) [5]string {
		var c [5]string
		for i := range c {
			c[i] = rapid.StringMatching(`[0-9a-f]{0,8}`).Draw(t, fmt.Sprintf("component%d", i))
		}
		return c
	})
}

// setComponent sets component i of k.
func setComponent(k *fallback.RunKey, i int, v string) {
	switch i {
	case 0:
		k.CassetteID = v
	case 1:
		k.StoreDigest = v
	case 2:
		k.RepoSnapshotSHA = v
	case 3:
		k.EmbeddingModelDigest = v
	case 4:
		k.ConfigDigest = v
	}
}

func TestRunKeyStableUnderConstructionOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := keyComponents().Draw(t, "components")
		literal := fallback.RunKey{CassetteID: c[0], StoreDigest: c[1], RepoSnapshotSHA: c[2], EmbeddingModelDigest: c[3], ConfigDigest: c[4]}
		order := rapid.Permutation([]int{0, 1, 2, 3, 4}).Draw(t, "order")
		var built fallback.RunKey
		for _, i := range order {
			setComponent(&built, i, c[i])
		}
		require.Equal(t, literal.Digest(), built.Digest())
		require.Equal(t, literal.String(), built.String())
		require.Len(t, built.String(), 64)
	})
}

func TestRunKeySensitiveToEveryComponent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := keyComponents().Draw(t, "components")
		var a fallback.RunKey
		for i := range c {
			setComponent(&a, i, c[i])
		}
		i := rapid.IntRange(0, 4).Draw(t, "component")
		v := rapid.StringMatching(`[0-9a-f]{0,8}`).Filter(func(s string) bool { return s != c[i] }).Draw(t, "new value")
		b := a
		setComponent(&b, i, v)
		require.NotEqual(t, a.Digest(), b.Digest(), "changing component %d from %q to %q", i, c[i], v)
	})
}

// Moving a value from one component to another changes the key: the
// encoding names every field, so components cannot be confused.
func TestRunKeyComponentsAreNamed(t *testing.T) {
	a := fallback.RunKey{CassetteID: "x"}
	b := fallback.RunKey{StoreDigest: "x"}
	require.NotEqual(t, a.Digest(), b.Digest())
}

// The key a tier computes ignores the order of repo files and of store
// insertion, and changes with the repo contents.
func TestTierRunKeyIgnoresInputOrder(t *testing.T) {
	s := scenario(t, "go-xnet")
	examples, err := fixtures.LoadExamples()
	require.NoError(t, err)
	base := fakeTier(t, fakellm.Normal, false)
	want, err := base.RunKey(s.Repo)
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		exs := rapid.Permutation(examples).Draw(t, "insertion order")
		store := rag.NewStore()
		for _, ex := range exs {
			require.NoError(t, store.Add(ex))
		}
		files := rapid.Permutation(s.Repo.Files).Draw(t, "file order")
		tier := *base
		tier.Store = store
		got, err := tier.RunKey(fallback.RepoContext{Files: files})
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	changed := fallback.RepoContext{Files: append(s.Repo.Files[:0:0], s.Repo.Files...)}
	changed.Files[0].Content = append([]byte("// edited\n"), changed.Files[0].Content...)
	k, err := base.RunKey(changed)
	require.NoError(t, err)
	require.NotEqual(t, want.RepoSnapshotSHA, k.RepoSnapshotSHA)
	require.NotEqual(t, want.String(), k.String())

	smaller := *base
	smaller.Store = rag.NewStore()
	k, err = smaller.RunKey(s.Repo)
	require.NoError(t, err)
	require.NotEqual(t, want.StoreDigest, k.StoreDigest)

	other, err := rag.NewHashEmbedder(rag.HashEmbedderConfig{Dimensions: 128})
	require.NoError(t, err)
	reembedded := *base
	reembedded.Embedder = other
	k, err = reembedded.RunKey(s.Repo)
	require.NoError(t, err)
	require.NotEqual(t, want.EmbeddingModelDigest, k.EmbeddingModelDigest)
}

func TestPinDigestSensitiveToEveryField(t *testing.T) {
	gen := rapid.Custom(func(t *rapid.T) fallback.Pin {
		return fallback.Pin{
			TemplateVersion:  rapid.StringMatching(`v[0-9]`).Draw(t, "template"),
			TransformVersion: rapid.StringMatching(`t[0-9]`).Draw(t, "transform"),
			ThresholdLow:     rapid.StringMatching(`0\.[0-9]`).Draw(t, "low"),
			ThresholdHigh:    rapid.StringMatching(`0\.[0-9]`).Draw(t, "high"),
			K:                rapid.IntRange(1, 9).Draw(t, "k"),
			MaxFileBytes:     rapid.IntRange(1, 9).Draw(t, "max file"),
			MaxTotalBytes:    rapid.IntRange(1, 9).Draw(t, "max total"),
			Model:            rapid.StringMatching(`m[0-9]`).Draw(t, "model"),
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		p := gen.Draw(t, "pin")
		q := p
		switch rapid.IntRange(0, 8).Draw(t, "field") {
		case 0:
			q.TemplateVersion += "x"
		case 1:
			q.TransformVersion += "x"
		case 2:
			q.ThresholdLow += "1"
		case 3:
			q.ThresholdHigh += "1"
		case 4:
			q.K++
		case 5:
			q.MaxFileBytes++
		case 6:
			q.MaxTotalBytes++
		case 7:
			q.Model += "x"
		case 8:
			q.Adapter.Stream = !q.Adapter.Stream
		}
		a, err := p.Digest()
		require.NoError(t, err)
		b, err := q.Digest()
		require.NoError(t, err)
		require.NotEqual(t, a, b)
	})
}
