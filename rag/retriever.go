package rag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
)

// DefaultK is the number of examples a Retriever returns when K is 0.
const DefaultK = 5

// ErrEmptyQuery reports a query with nothing but white space in it.
var ErrEmptyQuery = errors.New("empty retrieval query")

// ErrDimensionMismatch reports vectors of different lengths, or an embedder
// that returned a different number of vectors than texts.
var ErrDimensionMismatch = errors.New("embedding dimension mismatch")

// ErrBadVector reports a vector with a NaN or infinite component, or one
// whose squared norm overflows.
var ErrBadVector = errors.New("bad embedding vector")

// Scored is an example with its cosine similarity to the query.
type Scored struct {
	Example Example
	Score   float64 // cosine similarity in [-1, 1]
}

// QueryText is the text embedded for a retrieval: the ecosystem, the package
// and the advisory text, each followed by a newline. Build the query for a
// new advisory with it so that queries and examples are embedded alike.
func QueryText(ecosystem, pkg, advisory string) string {
	return ecosystem + "\n" + pkg + "\n" + advisory + "\n"
}

// ExampleText is the text embedded for a stored example:
// QueryText(ex.Ecosystem, ex.Package, ex.Advisory). The fix is not embedded:
// a new advisory has no fix to compare it with.
func ExampleText(ex Example) string { return QueryText(ex.Ecosystem, ex.Package, ex.Advisory) }

// Retriever ranks the examples of Store by cosine similarity between the
// embedded query and ExampleText of each example.
//
// Set the exported fields before the first Retrieve and do not change them
// afterwards. Retrieve is safe for concurrent use.
type Retriever struct {
	Store    *Store
	Embedder Embedder
	// K is how many examples Retrieve returns at most: 0 means DefaultK,
	// negative is an error, more than the store holds returns them all.
	K int
	// Vectors, when set, keeps the example vectors between retrievals,
	// keyed by (store digest, embedder digest); see VectorCache. nil embeds
	// the examples on every Retrieve. Concurrent misses may each embed the
	// examples and store identical vectors.
	Vectors *VectorCache
}

// Retrieve returns the top K examples for query, by descending Score, ties
// broken by ascending ID. It embeds the query first, then (unless cached)
// all examples in one Embed call, in ID order. An empty store gives an
// empty result and no Embed call.
func (r *Retriever) Retrieve(ctx context.Context, query string) ([]Scored, error) {
	if r.Store == nil || r.Embedder == nil {
		return nil, fmt.Errorf("rag: retriever: %w: Store and Embedder must both be set", ErrBadConfig)
	}
	k := r.K
	if k == 0 {
		k = DefaultK
	}
	if k < 0 {
		return nil, fmt.Errorf("rag: retriever: K = %d: %w: use 0 for %d or a positive count", r.K, ErrBadConfig, DefaultK)
	}
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("rag: retrieve: %w: build the query with QueryText from the advisory", ErrEmptyQuery)
	}
	examples, storeDigest := r.Store.snapshot()
	if len(examples) == 0 {
		return []Scored{}, nil
	}
	qv, err := r.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("rag: retrieve: embedding the query: %w", err)
	}
	if len(qv) != 1 {
		return nil, fmt.Errorf("rag: retrieve: embedder returned %d vectors for 1 query: %w", len(qv), ErrDimensionMismatch)
	}
	if d := r.Embedder.Dimensions(); d > 0 && len(qv[0]) != d {
		return nil, fmt.Errorf("rag: retrieve: query vector has %d dimensions, the embedder declares %d: %w", len(qv[0]), d, ErrDimensionMismatch)
	}
	evs, err := r.exampleVectors(ctx, examples, storeDigest)
	if err != nil {
		return nil, err
	}
	scored := make([]Scored, len(examples))
	for i, ex := range examples {
		s, err := Cosine(qv[0], evs[i])
		if err != nil {
			return nil, fmt.Errorf("rag: retrieve: example %q: %w", ex.ID, err)
		}
		scored[i] = Scored{Example: ex, Score: s}
	}
	slices.SortFunc(scored, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Example.ID, b.Example.ID)
	})
	return scored[:min(k, len(scored))], nil
}

func (r *Retriever) exampleVectors(ctx context.Context, examples []Example, storeDigest events.Digest) ([][]float64, error) {
	var model events.Digest
	if r.Vectors != nil {
		model = r.Embedder.Digest()
		if vecs := r.Vectors.get(storeDigest, model); vecs != nil {
			return vecs, nil
		}
	}
	texts := make([]string, len(examples))
	for i, ex := range examples {
		texts[i] = ExampleText(ex)
	}
	vecs, err := r.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("rag: retrieve: embedding %d examples: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("rag: retrieve: embedder returned %d vectors for %d examples: %w", len(vecs), len(texts), ErrDimensionMismatch)
	}
	if r.Vectors != nil {
		r.Vectors.put(storeDigest, model, vecs)
	}
	return vecs, nil
}

// Cosine returns the cosine similarity of a and b, clamped to [-1, 1]; it is
// 0 when either vector is zero. The dot product and the squared norms are
// summed in index order with every product rounded to float64 before it is
// added (no fused multiply-add), so the result is the same on every
// platform. Vectors of different lengths give ErrDimensionMismatch;
// non-finite components give ErrBadVector.
func Cosine(a, b []float64) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("vectors of length %d and %d: %w", len(a), len(b), ErrDimensionMismatch)
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i] * b[i])
		na += float64(a[i] * a[i])
		nb += float64(b[i] * b[i])
	}
	if math.IsNaN(dot) || math.IsInf(dot, 0) || math.IsInf(na, 0) || math.IsInf(nb, 0) || math.IsNaN(na) || math.IsNaN(nb) {
		return 0, fmt.Errorf("cosine: a component is NaN or infinite, or a squared norm overflows: %w", ErrBadVector)
	}
	if na == 0 || nb == 0 {
		return 0, nil
	}
	den := float64(math.Sqrt(na) * math.Sqrt(nb))
	s := dot / den
	return max(-1, min(1, s)), nil
}
