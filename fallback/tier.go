package fallback

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
	Events events.Config
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
		r := &run{rec: events.NewRecorder(events.Config{})}
		err := r.fail("validate", configError("Run called on a nil *Tier; build a Tier and set its fields"))
		return Result{Events: r.rec.Events()}, err
	}
	cfg, err := t.eventConfig(ctx)
	r := &run{t: t, rec: events.NewRecorder(cfg)}
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

// eventConfig returns the recorder Config of one run: Events, or with
// LiveStamps the wall clock and random IDs, which the replay guard refuses
// in replay mode.
func (t *Tier) eventConfig(ctx context.Context) (events.Config, error) {
	if !t.LiveStamps {
		return t.Events, nil
	}
	if t.Events.Clock != nil || t.Events.NewID != nil {
		return events.Config{}, configError("LiveStamps is set together with Events.Clock or Events.NewID; choose one source of stamps")
	}
	clock, err := guard.WallClock(ctx)
	if err != nil {
		return events.Config{}, err
	}
	ids, err := guard.RandomIDSource(ctx)
	if err != nil {
		return events.Config{}, err
	}
	return events.Config{Clock: clock, NewID: ids}, nil
}
