package rag

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// One cache shared by retrievers over different stores and embedders keeps
// their vectors apart, evicts the least recently used entry, and never
// changes a result.
func TestVectorCacheSharedAndBounded(t *testing.T) {
	cache := NewVectorCache(2)
	exs := corpus(9)
	stores := []*Store{mustStore(t, exs[:3]...), mustStore(t, exs[3:6]...), mustStore(t, exs[6:]...)}
	h := mustHash(t, HashEmbedderConfig{})
	h2 := mustHash(t, HashEmbedderConfig{Dimensions: 64})
	const q = "lodash prototype pollution"
	for round := range 2 {
		for _, s := range stores[:2] {
			for _, e := range []Embedder{h, h2} {
				cached, err := (&Retriever{Store: s, Embedder: e, K: 10, Vectors: cache}).Retrieve(context.Background(), q)
				require.NoError(t, err)
				fresh, err := (&Retriever{Store: s, Embedder: e, K: 10}).Retrieve(context.Background(), q)
				require.NoError(t, err)
				require.Equal(t, fresh, cached, "round %d", round)
			}
		}
	}
	require.Equal(t, 2, cache.Len(), "bounded")

	// The most recently used entry survives the next insertion.
	f := &fixedEmbedder{dims: 2, vecs: map[string][]float64{q: {1, 0}}}
	for i, ex := range exs {
		f.vecs[ExampleText(ex)] = []float64{1, float64(i)}
	}
	r1 := &Retriever{Store: stores[0], Embedder: f, K: 10, Vectors: cache}
	r2 := &Retriever{Store: stores[1], Embedder: f, K: 10, Vectors: cache}
	r3 := &Retriever{Store: stores[2], Embedder: f, K: 10, Vectors: cache}
	for _, r := range []*Retriever{r1, r2, r1, r3} {
		_, err := r.Retrieve(context.Background(), q)
		require.NoError(t, err)
	}
	calls := f.calls
	_, err := r1.Retrieve(context.Background(), q)
	require.NoError(t, err)
	require.Equal(t, calls+1, f.calls, "r1's vectors were kept: only the query is embedded")
	_, err = r2.Retrieve(context.Background(), q)
	require.NoError(t, err)
	require.Equal(t, calls+3, f.calls, "r2's vectors were evicted: query and examples are embedded")
}
