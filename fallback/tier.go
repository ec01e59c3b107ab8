package fallback

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/codegenie/codegenie/guard"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/llm"
	"github.com/codegenie/codegenie/prompt"
	"github.com/codegenie/codegenie/rag"
)

// Advisory, RecipeSelection and AttemptSummary are the prompt package's
// input types; the pipeline passes them through unchanged.
type (
	Advisory        = prompt.Advisory
	RecipeSelection = prompt.RecipeSelection
	AttemptSummary  = prompt.AttemptSummary
)

// The paths a run can take, as Result.Path and the "path" field of
// run.started.
const (
	PathHappy = "happy" // no prior attempts
	PathRetry = "retry" // the retry-bypass path: prior attempts go into the prompt
)

// The band thresholds a Tier uses when Thresholds is the zero value,
// calibrated on the fixture store with the default hash embedder: the
// closest solved examples of a scenario land in Accept, related ones in
// Borderline, and unrelated ones are rejected (not shown to the model).
const (
	DefaultThresholdLow  = 0.45
	DefaultThresholdHigh = 0.55
)

// Tier is the fallback tier: retriever → prompt builder → LLM adapter →
// transform. Set the fields, then call Run; a Tier is safe for concurrent
// use and keeps no state between runs.
type Tier struct {
	// Store holds the solved examples. Nil is an empty store: the prompt
	// then shows no examples.
	Store *rag.Store
	// Embedder embeds the query and the examples. Nil means a
	// rag.HashEmbedder with its default configuration.
	Embedder rag.Embedder
	// Adapter completes the prompt. Required: Run fails with
	// ErrInvalidConfig without it.
	Adapter llm.Adapter
	// HTTPClient is the client the Adapter was built with. The tier makes
	// no requests through it; it only asks its Transport for the cassette
	// ID (see CassetteIdentifier). Nil means no cassette.
	HTTPClient *http.Client
	// Thresholds are the band boundaries; the zero value means
	// DefaultThresholdLow and DefaultThresholdHigh.
	Thresholds rag.Thresholds
	// K is the number of examples retrieved; 0 means rag.DefaultK.
	K int
	// Limits bound the repo files shown to the model; zero fields mean the
	// prompt package's defaults.
	Limits prompt.Limits
	// Vectors, when set, keeps the store's example vectors between runs,
	// keyed by (store digest, embedder digest), so that a run embeds only
	// its query; see rag.VectorCache, which it may share with other tiers.
	// Set it only with a deterministic local embedder (the default hash
	// embedder is one). nil embeds the store on every run.
	Vectors *rag.VectorCache
	// Events configures each run's recorder (clock and ID source for the
	// nondeterministic fields). The zero value leaves them empty.
	Events events.Options
	// LiveStamps stamps each run's events with the wall clock and random
	// IDs, as production does. Run takes them from the replay guard
	// (guard.WallClock, guard.RandomIDSource), so a run whose context is
	// in replay mode fails with a *guard.ReplayModeError before any work:
	// a replayed run must take its clock and IDs from the recording
	// through Events (guard.ClockFromTape, guard.IDSource). Events.Clock
	// and Events.NewID must be nil with it.
	LiveStamps bool
}

// Result is what a run produced. On failure Run returns a Result with the
// events recorded so far (ending in transform.failed), the RunKey when it
// could be computed, and the Path.
type Result struct {
	Transform Transform
	Events    []events.Event
	RunKey    RunKey
	Path      string
}

// cassetteID asks the HTTP client's transport for its cassette ID.
func (t *Tier) cassetteID() string {
	if t.HTTPClient == nil || t.HTTPClient.Transport == nil {
		return ""
	}
	if c, ok := t.HTTPClient.Transport.(CassetteIdentifier); ok {
		return c.CassetteID()
	}
	return ""
}

// configError reports a Tier field that cannot run.
func configError(msg string) error {
	return fmt.Errorf("fallback: tier config: %s: %w", msg, ErrInvalidConfig)
}

// embedder returns the configured embedder or the default hash embedder.
func (t *Tier) embedder() (rag.Embedder, error) {
	if t.Embedder != nil {
		return t.Embedder, nil
	}
	return rag.NewHashEmbedder(rag.HashEmbedderConfig{})
}

// store returns the configured store or an empty one.
func (t *Tier) store() *rag.Store {
	if t.Store != nil {
		return t.Store
	}
	return rag.NewStore()
}

// Pin returns the tier's configuration pin (its Digest is the RunKey's
// ConfigDigest).
func (t *Tier) Pin() (Pin, error) {
	var settings llm.Settings
	if t.Adapter != nil {
		if err := catchPanic("adapter settings", func() error {
			settings = t.Adapter.Settings()
			return nil
		}); err != nil {
			return Pin{}, err
		}
	}
	return t.pinFor(settings), nil
}

// RunKey computes the key a run over repo would be pinned to. Run computes
// the same key before its first event.
func (t *Tier) RunKey(repo RepoContext) (RunKey, error) {
	k, _, _, _, err := t.runKey(repo)
	return k, err
}

// runKey computes the run's key. With it, it returns what the run goes on
// to use, so that nothing is computed twice: the pin, the embedder and the
// repo's files, validated and sorted by path.
func (t *Tier) runKey(repo RepoContext) (key RunKey, pin Pin, emb rag.Embedder, fs []prompt.File, err error) {
	fs, err = sortedFiles(repo.Files)
	if err != nil {
		return RunKey{}, Pin{}, nil, nil, err
	}
	pin, err = t.Pin()
	if err != nil {
		return RunKey{}, Pin{}, nil, nil, err
	}
	cd, err := pin.Digest()
	if err != nil {
		return RunKey{}, Pin{}, nil, nil, err
	}
	emb, err = t.embedder()
	if err != nil {
		return RunKey{}, Pin{}, nil, nil, err
	}
	err = catchPanic("digests", func() error {
		key = RunKey{
			CassetteID:           t.cassetteID(),
			StoreDigest:          t.store().Digest().String(),
			RepoSnapshotSHA:      snapshotSHA(fs),
			EmbeddingModelDigest: emb.Digest().String(),
			ConfigDigest:         cd.String(),
		}
		return nil
	})
	return key, pin, emb, fs, err
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

// Run runs the pipeline once for adv over repo and returns the canonical
// transform and the run's events. With prior attempts the run takes the
// retry-bypass path: their summaries go into the prompt. Each step emits
// one event (see the package documentation); on any failure Run emits a
// transform.failed event, returns the Result with the events so far, and an
// error: a *RunError naming the step, wrapping an *UnusableCompletionError
// (ErrUnusableCompletion) for a bad model answer, a prompt input error
// (prompt.ErrEmptyAdvisory, prompt.ErrNoFiles, prompt.ErrFileTooLarge, ...),
// rag.ErrBadThresholds, ErrInvalidConfig, ErrInvalidRepo, or a *PanicError
// for a dependency that panicked. Run never panics.
func (t *Tier) Run(ctx context.Context, adv Advisory, repo RepoContext, sel RecipeSelection, prior []AttemptSummary) (Result, error) {
	if t == nil {
		r := &run{rec: events.NewRecorder(events.Options{})}
		err := r.fail("validate", configError("Run called on a nil *Tier; build a Tier and set its fields"))
		return Result{Events: r.rec.Events()}, err
	}
	opts, err := t.eventOptions(ctx)
	r := &run{t: t, rec: events.NewRecorder(opts)}
	r.res.Path = PathHappy
	if len(prior) > 0 {
		r.res.Path = PathRetry
	}
	if err != nil {
		err = r.fail("validate", err)
		return Result{Events: r.rec.Events(), Path: r.res.Path}, err
	}
	err = catchPanic("run", func() error { return r.run(ctx, adv, repo, sel, prior) })
	var perr *PanicError
	if errors.As(err, &perr) && !r.failed {
		// A panic that escaped every step guard: still leave a failure event.
		err = r.fail("run", err)
	}
	r.res.Events = r.rec.Events()
	if err != nil {
		r.res.Transform = Transform{}
	}
	return r.res, err
}

// eventOptions returns the recorder options of one run: Events, or with
// LiveStamps the wall clock and random IDs, which the replay guard refuses
// in replay mode.
func (t *Tier) eventOptions(ctx context.Context) (events.Options, error) {
	if !t.LiveStamps {
		return t.Events, nil
	}
	if t.Events.Clock != nil || t.Events.NewID != nil {
		return events.Options{}, configError("LiveStamps is set together with Events.Clock or Events.NewID; choose one source of stamps")
	}
	clock, err := guard.WallClock(ctx)
	if err != nil {
		return events.Options{}, err
	}
	ids, err := guard.RandomIDSource(ctx)
	if err != nil {
		return events.Options{}, err
	}
	return events.Options{Clock: clock, NewID: ids}, nil
}

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

// failedPayload is the payload of transform.failed.
type failedPayload struct {
	Step    string `json:"step"`    // the step that failed (see RunError.Step)
	Kind    string `json:"kind"`    // error class, see errorKind
	Reason  string `json:"reason"`  // UnusableCompletionError.Reason, or ""
	Path    string `json:"path"`    // the file concerned, or ""
	Error   string `json:"error"`   // the error message
	Excerpt string `json:"excerpt"` // bounded excerpt of the offending text, or ""
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

// Payloads of the step events.
type (
	runStartedPayload struct {
		Path          string `json:"path"`
		RunKey        RunKey `json:"run_key"`
		RunKeyDigest  string `json:"run_key_digest"`
		Pin           Pin    `json:"pin"`
		AdvisoryID    string `json:"advisory_id"`
		Files         int    `json:"files"`
		PriorAttempts int    `json:"prior_attempts"`
	}
	retrievalQueriedPayload struct {
		Query                string `json:"query"`
		QueryDigest          string `json:"query_digest"`
		K                    int    `json:"k"`
		StoreSize            int    `json:"store_size"`
		EmbeddingModelDigest string `json:"embedding_model_digest"`
	}
	rankedExample struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
	}
	retrievalRankedPayload struct {
		Results []rankedExample `json:"results"`
	}
	classifiedExample struct {
		ID    string   `json:"id"`
		Score float64  `json:"score"`
		Band  rag.Band `json:"band"`
	}
	bandClassifiedPayload struct {
		ThresholdLow  float64             `json:"threshold_low"`
		ThresholdHigh float64             `json:"threshold_high"`
		Examples      []classifiedExample `json:"examples"`
		TopBand       rag.Band            `json:"top_band"`
		Shown         int                 `json:"shown"`
	}
	promptBuiltPayload struct {
		TemplateVersion string `json:"template_version"`
		PromptDigest    string `json:"prompt_digest"`
		SystemBytes     int    `json:"system_bytes"`
		UserBytes       int    `json:"user_bytes"`
		Examples        int    `json:"examples"`
		Attempts        int    `json:"attempts"`
		System          string `json:"system"`
		User            string `json:"user"`
	}
	llmRequestedPayload struct {
		Settings      llm.Settings `json:"settings"`
		RequestDigest string       `json:"request_digest"`
	}
	llmRespondedPayload struct {
		Text         string `json:"text"`
		TextDigest   string `json:"text_digest"`
		Model        string `json:"model"`
		StopReason   string `json:"stop_reason"`
		ID           string `json:"id"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
	}
	transformProducedPayload struct {
		Diff       string   `json:"diff"`
		DiffDigest string   `json:"diff_digest"`
		DiffBytes  int      `json:"diff_bytes"`
		Files      []string `json:"files"`
	}
)

// PromptDigest is the digest recorded in prompt.built: blake3-256 of the
// canonical JSON object {"prompt": User, "system": System} (an llm.Request).
func PromptDigest(p prompt.Prompt) events.Digest {
	b, err := events.Canonical(llm.Request{System: p.System, Prompt: p.User})
	if err != nil {
		// Unreachable: two strings always encode.
		return events.Digest{}
	}
	return events.Sum(b)
}

func (r *run) run(ctx context.Context, adv Advisory, repo RepoContext, sel RecipeSelection, prior []AttemptSummary) error {
	t := r.t
	key, pin, emb, fs, err := t.runKey(repo)
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

	// Validate everything that does not need the network before doing any
	// work: the config, then the inputs as the prompt builder will see them.
	th := t.thresholds()
	if err := th.Validate(); err != nil {
		return r.fail("validate", err)
	}
	if t.K < 0 {
		return r.fail("validate", configError(fmt.Sprintf("K is %d; use 0 for rag.DefaultK (%d) or a positive count", t.K, rag.DefaultK)))
	}
	if t.Adapter == nil {
		return r.fail("validate", configError("Adapter is nil; set an llm.Adapter (llm.NewAnthropic or llm.NewOpenAI)"))
	}
	builder := prompt.Builder{Limits: t.Limits}
	in := prompt.Input{Advisory: adv, Files: repo.Files, Recipe: sel, Attempts: prior}
	if err := catchPanic("validate input", func() error {
		_, err := builder.Canonical(in)
		return err
	}); err != nil {
		return r.fail("validate", err)
	}

	// Retrieval.
	store := t.store()
	query := rag.QueryText(adv.Ecosystem, adv.Package, advisoryText(adv))
	if err := r.emit(KindRetrievalQueried, retrievalQueriedPayload{
		Query: query, QueryDigest: events.Sum([]byte(query)).String(), K: t.k(),
		StoreSize: store.Len(), EmbeddingModelDigest: key.EmbeddingModelDigest,
	}); err != nil {
		return r.fail(string(KindRetrievalQueried), err)
	}
	var scored []rag.Scored
	if err := catchPanic("retrieve", func() error {
		ret := &rag.Retriever{Store: store, Embedder: emb, K: t.k(), Vectors: t.Vectors}
		var rerr error
		scored, rerr = ret.Retrieve(ctx, query)
		return rerr
	}); err != nil {
		return r.fail(string(KindRetrievalRanked), err)
	}
	ranked := retrievalRankedPayload{Results: make([]rankedExample, len(scored))}
	for i, s := range scored {
		ranked.Results[i] = rankedExample{ID: s.Example.ID, Score: s.Score}
	}
	if err := r.emit(KindRetrievalRanked, ranked); err != nil {
		return r.fail(string(KindRetrievalRanked), err)
	}

	// Bands.
	bands := bandClassifiedPayload{ThresholdLow: th.Low, ThresholdHigh: th.High, Examples: make([]classifiedExample, len(scored))}
	var shown []prompt.Example
	for i, s := range scored {
		b, err := rag.Classify(s.Score, th)
		if err != nil {
			return r.fail(string(KindBandClassified), err)
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
		return r.fail(string(KindBandClassified), err)
	}

	// Prompt.
	in.Examples = shown
	var p prompt.Prompt
	if err := catchPanic("build prompt", func() error {
		var berr error
		p, berr = builder.Build(in)
		return berr
	}); err != nil {
		return r.fail(string(KindPromptBuilt), err)
	}
	pd := PromptDigest(p)
	if err := r.emit(KindPromptBuilt, promptBuiltPayload{
		TemplateVersion: prompt.TemplateVersion, PromptDigest: pd.String(),
		SystemBytes: len(p.System), UserBytes: len(p.User),
		Examples: len(shown), Attempts: len(prior), System: p.System, User: p.User,
	}); err != nil {
		return r.fail(string(KindPromptBuilt), err)
	}

	// LLM.
	req := llm.Request{System: p.System, Prompt: p.User}
	if err := r.emit(KindLLMRequested, llmRequestedPayload{Settings: pin.Adapter, RequestDigest: pd.String()}); err != nil {
		return r.fail(string(KindLLMRequested), err)
	}
	var resp llm.Response
	cerr := catchPanic("complete", func() error {
		var e error
		resp, e = t.Adapter.Complete(ctx, req)
		return e
	})
	if cerr != nil && !errors.Is(cerr, llm.ErrEmptyCompletion) {
		return r.fail(string(KindLLMResponded), cerr)
	}
	if err := r.emit(KindLLMResponded, llmRespondedPayload{
		Text: resp.Text, TextDigest: events.Sum([]byte(resp.Text)).String(), Model: resp.Model,
		StopReason: resp.StopReason, ID: resp.ID, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
	}); err != nil {
		return r.fail(string(KindLLMResponded), err)
	}
	if cerr != nil {
		return r.fail(string(KindTransformProduced), &UnusableCompletionError{
			Reason: ReasonEmptyResponse, Detail: cerr.Error(), Excerpt: excerpt(resp.Text),
		})
	}

	// Transform.
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
