package rag

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/codegenie/codegenie/events"
	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestRetrieveInvariantUnderInsertionOrder(t *testing.T) {
	h := mustHash(t, HashEmbedderConfig{Dimensions: 32})
	rapid.Check(t, func(t *rapid.T) {
		exs := genExampleSet(0, 15).Draw(t, "examples")
		perm := rapid.Permutation(exs).Draw(t, "permutation")
		q := genExample().Draw(t, "query")
		k := rapid.IntRange(0, 20).Draw(t, "k")
		query := QueryText(q.Ecosystem, q.Package, q.Advisory)

		a := &Retriever{Store: mustStore(t, exs...), Embedder: h, K: k}
		b := &Retriever{Store: mustStore(t, perm...), Embedder: h, K: k}
		ra, err := a.Retrieve(context.Background(), query)
		require.NoError(t, err)
		rb, err := b.Retrieve(context.Background(), query)
		require.NoError(t, err)
		if diff := pretty.Diff(ra, rb); len(diff) > 0 {
			t.Fatalf("ranking depends on insertion order:\n%s", strings.Join(diff, "\n"))
		}
		checkRanking(t, ra)
	})
}

// checkRanking asserts scores descend, ties ascend by ID, and scores are in
// [-1, 1].
func checkRanking(t rapid.TB, got []Scored) {
	t.Helper()
	for i, s := range got {
		require.False(t, math.IsNaN(s.Score))
		require.LessOrEqual(t, s.Score, 1.0)
		require.GreaterOrEqual(t, s.Score, -1.0)
		if i == 0 {
			continue
		}
		p := got[i-1]
		require.True(t, p.Score > s.Score || (p.Score == s.Score && p.Example.ID < s.Example.ID),
			"rank %d (%s %v) before rank %d (%s %v)", i-1, p.Example.ID, p.Score, i, s.Example.ID, s.Score)
	}
}

// fixedEmbedder maps each text to a preset vector (the zero vector of its
// dimensions when the text is unknown) and counts Embed calls.
type fixedEmbedder struct {
	mu      sync.Mutex
	vecs    map[string][]float64
	dims    int
	calls   int
	texts   int
	corrupt func([][]float64) [][]float64
	err     error
}

func (f *fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float64, error) {
	f.mu.Lock()
	f.calls++
	f.texts += len(texts)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float64, len(texts))
	for i, t := range texts {
		v, ok := f.vecs[t]
		if !ok {
			v = make([]float64, f.dims)
		}
		out[i] = v
	}
	if f.corrupt != nil {
		out = f.corrupt(out)
	}
	return out, nil
}

func (f *fixedEmbedder) Digest() events.Digest { return events.Sum([]byte("fixed")) }
func (f *fixedEmbedder) Dimensions() int       { return f.dims }

func TestRetrieveTieBreakByID(t *testing.T) {
	// Four examples share one vector (equal scores); one is closer.
	exs := []Example{
		{ID: "d", Advisory: "same"}, {ID: "b", Advisory: "same"}, {ID: "c", Advisory: "best"},
		{ID: "a", Advisory: "same"}, {ID: "e", Advisory: "far"},
	}
	vecs := map[string][]float64{"query": {1, 0}}
	for _, ex := range exs {
		switch ex.Advisory {
		case "same":
			vecs[ExampleText(ex)] = []float64{1, 1}
		case "best":
			vecs[ExampleText(ex)] = []float64{2, 0.1}
		case "far":
			vecs[ExampleText(ex)] = []float64{0, 1}
		}
	}
	r := &Retriever{Store: mustStore(t, exs...), Embedder: &fixedEmbedder{vecs: vecs, dims: 2}, K: 10}
	got, err := r.Retrieve(context.Background(), "query")
	require.NoError(t, err)
	ids := make([]string, len(got))
	for i, s := range got {
		ids[i] = s.Example.ID
	}
	require.Equal(t, []string{"c", "a", "b", "d", "e"}, ids)
	require.Equal(t, got[1].Score, got[2].Score)
	require.Equal(t, got[2].Score, got[3].Score)
	require.Equal(t, 0.0, got[4].Score)
}

func TestRetrieveK(t *testing.T) {
	exs := corpus(12)
	h := mustHash(t, HashEmbedderConfig{})
	tests := []struct {
		name    string
		k       int
		want    int
		wantErr error
	}{
		{name: "zero means default", k: 0, want: DefaultK},
		{name: "one", k: 1, want: 1},
		{name: "all", k: 12, want: 12},
		{name: "more than stored", k: 1000, want: 12},
		{name: "negative", k: -1, wantErr: ErrBadConfig},
	}
	full, err := (&Retriever{Store: mustStore(t, exs...), Embedder: h, K: 12}).Retrieve(context.Background(), "lodash prototype pollution")
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Retriever{Store: mustStore(t, exs...), Embedder: h, K: tc.k}
			got, err := r.Retrieve(context.Background(), "lodash prototype pollution")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, full[:tc.want], got, "top-k must be a prefix of the full ranking")
		})
	}
}

func TestRetrieveRanksRelevantFirst(t *testing.T) {
	r := &Retriever{Store: mustStore(t, corpus(30)...), Embedder: mustHash(t, HashEmbedderConfig{}), K: 3}
	got, err := r.Retrieve(context.Background(), QueryText("PyPI", "requests", "Proxy-Authorization header leaks to the destination host on redirect"))
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, s := range got {
		require.Equal(t, "requests", s.Example.Package, "%# v", pretty.Formatter(got))
	}
}

func TestRetrieveErrors(t *testing.T) {
	store := mustStore(t, Example{ID: "a", Advisory: "x"}, Example{ID: "b", Advisory: "y"})
	boom := errors.New("boom")
	tests := []struct {
		name    string
		r       *Retriever
		query   string
		wantErr error
	}{
		{name: "no store", r: &Retriever{Embedder: &fixedEmbedder{dims: 2}}, query: "q", wantErr: ErrBadConfig},
		{name: "no embedder", r: &Retriever{Store: store}, query: "q", wantErr: ErrBadConfig},
		{name: "blank query", r: &Retriever{Store: store, Embedder: &fixedEmbedder{dims: 2}}, query: " \n", wantErr: ErrEmptyQuery},
		{name: "embedder fails", r: &Retriever{Store: store, Embedder: &fixedEmbedder{dims: 2, err: boom}}, query: "q", wantErr: boom},
		{name: "too few vectors", r: &Retriever{Store: store, Embedder: &fixedEmbedder{dims: 2, corrupt: func(v [][]float64) [][]float64 {
			if len(v) > 1 {
				return v[:1]
			}
			return v
		}}}, query: "q", wantErr: ErrDimensionMismatch},
		{name: "no query vector", r: &Retriever{Store: store, Embedder: &fixedEmbedder{dims: 2, corrupt: func(v [][]float64) [][]float64 { return nil }}},
			query: "q", wantErr: ErrDimensionMismatch},
		{name: "ragged vectors", r: &Retriever{Store: store, Embedder: &fixedEmbedder{dims: 2, corrupt: func(v [][]float64) [][]float64 {
			if len(v) > 1 {
				v[1] = []float64{1, 2, 3}
			}
			return v
		}}}, query: "q", wantErr: ErrDimensionMismatch},
		{name: "NaN component", r: &Retriever{Store: store, Embedder: &fixedEmbedder{dims: 2, corrupt: func(v [][]float64) [][]float64 {
			for i := range v {
				v[i] = []float64{math.NaN(), 1}
			}
			return v
		}}}, query: "q", wantErr: ErrBadVector},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.r.Retrieve(context.Background(), tc.query)
			require.ErrorIs(t, err, tc.wantErr)
			require.Nil(t, got)
		})
	}
}

func TestRetrieveEmptyStore(t *testing.T) {
	f := &fixedEmbedder{dims: 2}
	got, err := (&Retriever{Store: NewStore(), Embedder: f}).Retrieve(context.Background(), "q")
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)
	require.Zero(t, f.calls, "an empty store needs no embedding")
}

func TestRetrieveCache(t *testing.T) {
	exs := corpus(6)
	store := mustStore(t, exs[:5]...)
	f := &fixedEmbedder{dims: 2, vecs: map[string][]float64{"q": {1, 0}}}
	for i, ex := range exs {
		f.vecs[ExampleText(ex)] = []float64{1, float64(i)}
	}
	cached := &Retriever{Store: store, Embedder: f, K: 10, Vectors: NewVectorCache(0)}
	first, err := cached.Retrieve(context.Background(), "q")
	require.NoError(t, err)
	require.Equal(t, 2, f.calls)
	second, err := cached.Retrieve(context.Background(), "q")
	require.NoError(t, err)
	require.Equal(t, first, second)
	require.Equal(t, 3, f.calls, "second retrieve embeds only the query")
	require.Equal(t, 5+1+1, f.texts)

	// A store change invalidates the cache.
	require.NoError(t, store.Add(exs[5]))
	third, err := cached.Retrieve(context.Background(), "q")
	require.NoError(t, err)
	require.Len(t, third, 6)
	require.Equal(t, 5, f.calls)

	uncached := &Retriever{Store: store, Embedder: f, K: 10}
	fresh, err := uncached.Retrieve(context.Background(), "q")
	require.NoError(t, err)
	require.Equal(t, third, fresh, "cached and uncached results must agree")
}

func TestRetrieveConcurrent(t *testing.T) {
	h := mustHash(t, HashEmbedderConfig{})
	r := &Retriever{Store: mustStore(t, corpus(40)...), Embedder: h, K: 5, Vectors: NewVectorCache(0)}
	want, err := (&Retriever{Store: r.Store, Embedder: h, K: 5}).Retrieve(context.Background(), "golang.org/x/net http2 reset")
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make([][]Scored, 8)
	for i := range results {
		wg.Go(func() {
			got, err := r.Retrieve(context.Background(), "golang.org/x/net http2 reset")
			if err != nil {
				t.Error(err)
			}
			results[i] = got
		})
	}
	wg.Wait()
	for i, got := range results {
		require.Equal(t, want, got, "goroutine %d", i)
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		name    string
		a, b    []float64
		want    float64
		wantErr error
	}{
		{name: "identical", a: []float64{3, 4}, b: []float64{3, 4}, want: 1},
		{name: "opposite", a: []float64{1, 2}, b: []float64{-1, -2}, want: -1},
		{name: "orthogonal", a: []float64{1, 0}, b: []float64{0, 5}, want: 0},
		{name: "zero vector", a: []float64{0, 0}, b: []float64{1, 1}, want: 0},
		{name: "empty", a: nil, b: nil, want: 0},
		{name: "length mismatch", a: []float64{1}, b: []float64{1, 2}, wantErr: ErrDimensionMismatch},
		{name: "infinity", a: []float64{math.Inf(1)}, b: []float64{1}, wantErr: ErrBadVector},
		{name: "overflow", a: []float64{1e300}, b: []float64{1}, wantErr: ErrBadVector},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Cosine(tc.a, tc.b)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.InDelta(t, tc.want, got, 1e-15)
		})
	}
}

func TestCosineSymmetricAndBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 16).Draw(t, "n")
		a := rapid.SliceOfN(rapid.Float64Range(-1e3, 1e3), n, n).Draw(t, "a")
		b := rapid.SliceOfN(rapid.Float64Range(-1e3, 1e3), n, n).Draw(t, "b")
		ab, err := Cosine(a, b)
		require.NoError(t, err)
		ba, err := Cosine(b, a)
		require.NoError(t, err)
		require.Equal(t, ab, ba)
		require.LessOrEqual(t, math.Abs(ab), 1.0)
	})
}

func TestRetrieveDeclaredDimensions(t *testing.T) {
	f := &fixedEmbedder{dims: 3, vecs: map[string][]float64{"q": {1, 0}}}
	_, err := (&Retriever{Store: mustStore(t, Example{ID: "a"}), Embedder: f}).Retrieve(context.Background(), "q")
	require.ErrorIs(t, err, ErrDimensionMismatch)
	require.Contains(t, err.Error(), "2 dimensions, the embedder declares 3")
}
