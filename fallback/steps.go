package fallback

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/llm"
	"github.com/codegenie/codegenie/prompt"
	"github.com/codegenie/codegenie/rag"
)

// run is the state of one Run.
type run struct {
	t      *Tier
	rec    *events.Recorder
	res    Result
	failed bool
}

// emit records the next step's event, a child of the previous one.
func (r *run) emit(kind events.Kind, payload any) error {
	_, err := r.rec.Emit(kind, payload)
	return err
}

// errorKind classifies an error for the transform.failed payload.
func errorKind(err error) string {
	var uerr *UnusableCompletionError
	switch {
	case errors.As(err, &uerr):
		return "unusable-completion"
	case errors.Is(err, ErrPanic):
		return "panic"
	case errors.Is(err, ErrInvalidRepo), errors.Is(err, prompt.ErrInvalidPath), errors.Is(err, prompt.ErrDuplicatePath):
		return "invalid-repo"
	case errors.Is(err, rag.ErrBadThresholds), errors.Is(err, ErrInvalidConfig), errors.Is(err, rag.ErrBadConfig):
		return "invalid-config"
	case errors.Is(err, prompt.ErrEmptyAdvisory), errors.Is(err, prompt.ErrNoFiles),
		errors.Is(err, prompt.ErrFileTooLarge), errors.Is(err, prompt.ErrTotalTooLarge),
		errors.Is(err, prompt.ErrInvalidAttempt):
		return "invalid-input"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	var aerr *llm.APIError
	if errors.As(err, &aerr) {
		return "llm-api"
	}
	return "error"
}

// fail records transform.failed for err at step and marks the run failed.
// It returns the error Run reports.
func (r *run) fail(step string, err error) error {
	r.failed = true
	p := failedPayload{Step: step, Kind: errorKind(err), Error: excerpt(err.Error())}
	if p.Kind == "error" && step == string(KindLLMResponded) {
		p.Kind = "llm" // a transport or protocol failure of the model call
	}
	var uerr *UnusableCompletionError
	if errors.As(err, &uerr) {
		p.Reason, p.Path, p.Excerpt = uerr.Reason, uerr.Path, uerr.Excerpt
	}
	if eerr := catchPanic("record failure", func() error { return r.emit(KindTransformFailed, p) }); eerr != nil {
		return &RunError{Step: step, Err: errors.Join(err, eerr)}
	}
	return &RunError{Step: step, Err: err}
}

// run takes the steps of the pipeline in order. Each step emits its event,
// or records transform.failed and returns the error Run reports.
func (r *run) run(ctx context.Context, adv Advisory, repo RepoContext, sel RecipeSelection, prior []AttemptSummary) error {
	key, pin, emb, fs, err := r.t.runKey(repo)
	if err != nil {
		return r.fail("validate", err)
	}
	r.res.RunKey = key
	if err := r.emit(KindRunStarted, runStartedPayload{
		Path: r.res.Path, RunKey: key, RunKeyDigest: key.String(), Pin: pin,
		AdvisoryID: adv.ID, Files: len(repo.Files), PriorAttempts: len(prior),
	}); err != nil {
		return r.fail(string(KindRunStarted), err)
	}
	in := prompt.Input{Advisory: adv, Files: repo.Files, Recipe: sel, Attempts: prior}
	th, err := r.validate(in)
	if err != nil {
		return err
	}
	scored, err := r.retrieve(ctx, adv, emb, key.EmbeddingModelDigest)
	if err != nil {
		return err
	}
	if in.Examples, err = r.classify(scored, th); err != nil {
		return err
	}
	p, pd, err := r.buildPrompt(in)
	if err != nil {
		return err
	}
	resp, err := r.complete(ctx, p, pd, pin.Adapter)
	if err != nil {
		return err
	}
	return r.produce(fs, resp)
}

// validate checks everything that does not need the network before any
// work: the config, then the inputs as the prompt builder will see them.
// It returns the band thresholds.
func (r *run) validate(in prompt.Input) (rag.Thresholds, error) {
	t := r.t
	th := t.thresholds()
	if err := th.Validate(); err != nil {
		return th, r.fail("validate", err)
	}
	if t.K < 0 {
		return th, r.fail("validate", configError(fmt.Sprintf("K is %d; use 0 for rag.DefaultK (%d) or a positive count", t.K, rag.DefaultK)))
	}
	if t.Adapter == nil {
		return th, r.fail("validate", configError("Adapter is nil; set an llm.Adapter (llm.NewAnthropic or llm.NewOpenAI)"))
	}
	if err := catchPanic("validate input", func() error {
		_, err := prompt.Builder{Limits: t.Limits}.Canonical(in)
		return err
	}); err != nil {
		return th, r.fail("validate", err)
	}
	return th, nil
}

// retrieve queries the store for examples of the advisory (retrieval.queried)
// and returns them ranked (retrieval.ranked).
func (r *run) retrieve(ctx context.Context, adv Advisory, emb rag.Embedder, embDigest string) ([]rag.Scored, error) {
	t := r.t
	store := t.store()
	query := rag.QueryText(adv.Ecosystem, adv.Package, advisoryText(adv))
	if err := r.emit(KindRetrievalQueried, retrievalQueriedPayload{
		Query: query, QueryDigest: events.Sum([]byte(query)).String(), K: t.k(),
		StoreSize: store.Len(), EmbeddingModelDigest: embDigest,
	}); err != nil {
		return nil, r.fail(string(KindRetrievalQueried), err)
	}
	var scored []rag.Scored
	if err := catchPanic("retrieve", func() error {
		ret := &rag.Retriever{Store: store, Embedder: emb, K: t.k(), Vectors: t.Vectors}
		var rerr error
		scored, rerr = ret.Retrieve(ctx, query)
		return rerr
	}); err != nil {
		return nil, r.fail(string(KindRetrievalRanked), err)
	}
	ranked := retrievalRankedPayload{Results: make([]rankedExample, len(scored))}
	for i, s := range scored {
		ranked.Results[i] = rankedExample{ID: s.Example.ID, Score: s.Score}
	}
	if err := r.emit(KindRetrievalRanked, ranked); err != nil {
		return nil, r.fail(string(KindRetrievalRanked), err)
	}
	return scored, nil
}

// advisoryText is the advisory text embedded for retrieval: the summary and
// the details, separated by a blank line when both are present.
func advisoryText(a Advisory) string {
	var parts []string
	for _, s := range []string{a.Summary, a.Details} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

// classify bands the ranked examples (band.classified) and returns the
// ones the prompt shows: all but the rejected.
func (r *run) classify(scored []rag.Scored, th rag.Thresholds) ([]prompt.Example, error) {
	bands := bandClassifiedPayload{ThresholdLow: th.Low, ThresholdHigh: th.High, Examples: make([]classifiedExample, len(scored))}
	var shown []prompt.Example
	for i, s := range scored {
		b, err := rag.Classify(s.Score, th)
		if err != nil {
			return nil, r.fail(string(KindBandClassified), err)
		}
		bands.Examples[i] = classifiedExample{ID: s.Example.ID, Score: s.Score, Band: b}
		if i == 0 || b > bands.TopBand {
			bands.TopBand = b
		}
		if b == rag.Reject {
			continue
		}
		shown = append(shown, prompt.Example{
			ID: s.Example.ID, Ecosystem: s.Example.Ecosystem, Package: s.Example.Package,
			Advisory: s.Example.Advisory, Fix: s.Example.Fix, Score: s.Score, Band: b.String(),
		})
	}
	bands.Shown = len(shown)
	if err := r.emit(KindBandClassified, bands); err != nil {
		return nil, r.fail(string(KindBandClassified), err)
	}
	return shown, nil
}

// buildPrompt builds the prompt (prompt.built) and returns it with its
// PromptDigest in hex.
func (r *run) buildPrompt(in prompt.Input) (prompt.Prompt, string, error) {
	var p prompt.Prompt
	if err := catchPanic("build prompt", func() error {
		var berr error
		p, berr = prompt.Builder{Limits: r.t.Limits}.Build(in)
		return berr
	}); err != nil {
		return p, "", r.fail(string(KindPromptBuilt), err)
	}
	pd := PromptDigest(p).String()
	if err := r.emit(KindPromptBuilt, promptBuiltPayload{
		TemplateVersion: prompt.TemplateVersion, PromptDigest: pd,
		SystemBytes: len(p.System), UserBytes: len(p.User),
		Examples: len(in.Examples), Attempts: len(in.Attempts), System: p.System, User: p.User,
	}); err != nil {
		return p, "", r.fail(string(KindPromptBuilt), err)
	}
	return p, pd, nil
}

// complete asks the model (llm.requested, llm.responded); promptDigest is
// the request's digest. An empty completion is recorded, then fails the
// run as an unusable answer.
func (r *run) complete(ctx context.Context, p prompt.Prompt, promptDigest string, settings llm.Settings) (llm.Response, error) {
	req := llm.Request{System: p.System, Prompt: p.User}
	if err := r.emit(KindLLMRequested, llmRequestedPayload{Settings: settings, RequestDigest: promptDigest}); err != nil {
		return llm.Response{}, r.fail(string(KindLLMRequested), err)
	}
	var resp llm.Response
	cerr := catchPanic("complete", func() error {
		var e error
		resp, e = r.t.Adapter.Complete(ctx, req)
		return e
	})
	if cerr != nil && !errors.Is(cerr, llm.ErrEmptyCompletion) {
		return resp, r.fail(string(KindLLMResponded), cerr)
	}
	if err := r.emit(KindLLMResponded, llmRespondedPayload{
		Text: resp.Text, TextDigest: events.Sum([]byte(resp.Text)).String(), Model: resp.Model,
		StopReason: resp.StopReason, ID: resp.ID, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
	}); err != nil {
		return resp, r.fail(string(KindLLMResponded), err)
	}
	if cerr != nil {
		return resp, r.fail(string(KindTransformProduced), &UnusableCompletionError{
			Reason: ReasonEmptyResponse, Detail: cerr.Error(), Excerpt: excerpt(resp.Text),
		})
	}
	return resp, nil
}

// produce turns the answer into the canonical transform
// (transform.produced) against the repo's files fs.
func (r *run) produce(fs []prompt.File, resp llm.Response) error {
	tr, files, err := transformFromAnswer(fs, resp.Text)
	if err != nil {
		return r.fail(string(KindTransformProduced), err)
	}
	if err := r.emit(KindTransformProduced, transformProducedPayload{
		Diff: string(tr.DiffBytes), DiffDigest: events.Sum(tr.DiffBytes).String(),
		DiffBytes: len(tr.DiffBytes), Files: files,
	}); err != nil {
		return r.fail(string(KindTransformProduced), err)
	}
	r.res.Transform = tr
	return nil
}
