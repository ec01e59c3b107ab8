package guard

import (
	"context"
	"fmt"

	"github.com/codegenie/codegenie/events"
)

// Embedder has the method set of rag.Embedder. It is declared here so that
// guard does not import rag: any rag.Embedder is a guard.Embedder and the
// other way round.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float64, error)
	Digest() events.Digest
	Dimensions() int
}

// LiveEmbedder wraps an embedder that calls a live model so that Embed
// fails with a *ReplayModeError (Op OpEmbed) in replay mode instead of
// reaching the model. Digest and Dimensions are passed through. Do not wrap
// deterministic local embedders: they are safe to run during replay.
func LiveEmbedder(e Embedder) Embedder { return liveEmbedder{e} }

type liveEmbedder struct{ e Embedder }

func (l liveEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	if err := check(ctx, OpEmbed, fmt.Sprintf("%d text(s) for model %s", len(texts), l.e.Digest())); err != nil {
		return nil, err
	}
	return l.e.Embed(ctx, texts)
}

func (l liveEmbedder) Digest() events.Digest { return l.e.Digest() }
func (l liveEmbedder) Dimensions() int       { return l.e.Dimensions() }
