package properties

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/guard"
	"github.com/codegenie/codegenie/guard/guardtest"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/hint"
)

// allowlist is the gate's one list of event fields allowed to differ
// between runs: timestamps and audit-event IDs may differ and are
// stripped before comparison. Every other field is compared. Never add an entry to
// make the gate pass: a new difference is a nondeterminism to fix at its
// source.
var allowlist = []harness.AllowEntry{
	{Field: "EmittedAt", Reason: "ISO-8601 emission timestamp from the injected clock: clock-derived, differs every run by design"},
	{Field: "AuditEventID", Reason: "audit-event ID, a fresh uuid4 per event in production"},
}

// stripped is the allowlist as an events.Field set.
func stripped(t testing.TB) events.Field {
	t.Helper()
	var f events.Field
	for _, a := range allowlist {
		x, err := events.FieldByName(a.Field)
		require.NoError(t, err)
		f |= x
	}
	return f
}

const (
	// iterations is the seed's goal; floor is its minimum (Global Rule 6).
	iterations = 50
	floor      = 20
	// budget is the seed's wall-clock cap for one contract test.
	budget = 60 * time.Second
	// cassetteDir holds the committed cassettes, named
	// "<scenario>.<path>.yaml",
	// with their manifest (verified on every Open).
	cassetteDir = "../cassettes/testdata"
)

// paths are the two pipeline paths every scenario is gated on.
var paths = []string{fallback.PathHappy, fallback.PathRetry}

// llmSource serves the tier's LLM calls from the committed cassettes, in
// replay-only mode: nothing reaches a network. Every run through it has its
// context in replay mode (guard.WithReplay), and, when dials is set,
// reports dial attempts to it (guard.WithDialCounter).
type llmSource struct {
	dir   string
	dials *guard.CountingDialer
}

// countingDials returns s with every run's dial attempts reported to c.
func (s llmSource) countingDials(c *guard.CountingDialer) llmSource {
	s.dials = c
	return s
}

// replayContext is ctx in replay mode, with the source's dial counter.
func (s llmSource) replayContext(ctx context.Context) context.Context {
	ctx = guard.WithReplay(ctx)
	if s.dials != nil {
		ctx = guard.WithDialCounter(ctx, s.dials)
	}
	return ctx
}

// newSource checks that the committed cassettes are there (an empty glob
// fails: the gate never silently runs against something else).
func newSource(t testing.TB) llmSource {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(cassetteDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, m, "no cassettes in %s: the gate replays committed cassettes; record them with `go run ./cmd/refresh-cassettes` (see cassettes/doc.go)", cassetteDir)
	llmSourceLine.Store(fmt.Sprintf("%d committed cassettes in %s, replay-only", len(m), filepath.Clean(filepath.Join("properties", cassetteDir))))
	// Absolute: the rapid properties run in their artifact directory.
	dir, err := filepath.Abs(cassetteDir)
	require.NoError(t, err)
	return llmSource{dir: dir}
}

// cassette is the path of scenario's cassette for path.
func (s llmSource) cassette(scenario, path string) string {
	return filepath.Join(s.dir, scenario+"."+path+".yaml")
}

// open opens scenario's cassette for path, fresh for one run, and returns
// its client and Close (which fails on unused interactions).
func (s llmSource) open(scenario, path string) (*http.Client, func() error, error) {
	c, err := cassettes.Open(s.cassette(scenario, path), cassettes.Config{Hint: refreshHint(scenario, path)})
	if err != nil {
		return nil, nil, err
	}
	return c.Client(), c.Close, nil
}

// refreshHint is the command that re-records the committed cassette of
// scenario's path: the steward's refresh-cassettes, through the test that
// owns it (fixtures' TestCassettes).
func refreshHint(scenario, path string) string {
	return hint.Tool("refresh-cassettes", "-pkg", "./fixtures", "cassettes/testdata/"+scenario+"."+path+".yaml")
}

// runPipeline builds a fresh tier and runs scenario sc on path once, in
// replay mode. The clock and ID source are live (they fill the allowlisted
// fields, which therefore differ between runs, as in production, so the
// allowlist is exercised; inside the harness's synctest bubbles time.Now is
// the bubble's clock, set to another instant for every run). runReplayed
// runs with the replay guard's stand-ins instead.
func runPipeline(ctx context.Context, src llmSource, sc fixtures.Scenario, path string, iter int) (fallback.Result, error) {
	var n atomic.Int64
	return runTier(ctx, src, sc, path, func(client *http.Client) fixtures.TierConfig {
		return fixtures.TierConfig{
			HTTPClient: client,
			Clock:      time.Now,
			NewID:      func() string { return fmt.Sprintf("audit-%d-%d", iter, n.Add(1)) },
		}
	}, nil)
}

// runReplayed runs scenario sc on path once, in replay mode, with a tier
// set up for replay (fixtures.ReplaySetup): IDs from guard.IDSource(runKey)
// and the recorded clock, never the wall clock.
func runReplayed(ctx context.Context, src llmSource, sc fixtures.Scenario, path, runKey string, clock *guard.RecordedClock) (fallback.Result, error) {
	return runTier(ctx, src, sc, path, func(client *http.Client) fixtures.TierConfig {
		return fixtures.TierConfig{HTTPClient: client, Replay: &fixtures.ReplaySetup{RunKey: runKey, Clock: clock}}
	}, nil)
}

// runTier opens a fresh cassette, builds a tier with the configuration
// config gives for its client, lets mutate (if not nil) change the tier,
// and runs scenario sc on path once with ctx in replay mode.
func runTier(ctx context.Context, src llmSource, sc fixtures.Scenario, path string, config func(*http.Client) fixtures.TierConfig, mutate func(*fallback.Tier)) (fallback.Result, error) {
	client, done, err := src.open(sc.Name, path)
	if err != nil {
		return fallback.Result{}, err
	}
	res, err := runTierWith(ctx, src, sc, path, config(client), mutate)
	if cerr := done(); err == nil && cerr != nil {
		err = fmt.Errorf("scenario %s/%s: %w", sc.Name, path, cerr)
	}
	return res, err
}

// runTierWith builds a tier from cfg, lets mutate (if not nil) change it,
// and runs scenario sc on path once with ctx in replay mode.
func runTierWith(ctx context.Context, src llmSource, sc fixtures.Scenario, path string, cfg fixtures.TierConfig, mutate func(*fallback.Tier)) (fallback.Result, error) {
	tier, err := fixtures.NewTier(cfg)
	if err != nil {
		return fallback.Result{}, err
	}
	if mutate != nil {
		mutate(tier)
	}
	var prior []fallback.AttemptSummary
	if path == fallback.PathRetry {
		prior = sc.Prior
	}
	res, err := tier.Run(src.replayContext(ctx), sc.Advisory, sc.Repo, sc.Recipe, prior)
	if err != nil {
		return res, fmt.Errorf("scenario %s/%s: %w", sc.Name, path, err)
	}
	if res.Path != path {
		return res, fmt.Errorf("scenario %s/%s: the tier took the %s path", sc.Name, path, res.Path)
	}
	return res, nil
}

// contractScenario runs scenario sc on path once per harness run: a fresh
// tier over a client the harness opened on the committed cassette for this
// run alone, a live clock and IDs (see runPipeline), the tier's own tape,
// and the five components of its RunKey as the run's pins.
func contractScenario(src llmSource, sc fixtures.Scenario, path string) harness.Scenario {
	return func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(src.cassette(sc.Name, path))
		if err != nil {
			return nil, err
		}
		var n atomic.Int64
		res, err := runTierWith(ctx, src, sc, path, fixtures.TierConfig{
			HTTPClient: client,
			Clock:      time.Now,
			NewID:      func() string { return fmt.Sprintf("audit-%d-%d", run.Index(), n.Add(1)) },
		}, nil)
		// On error res holds the events up to the failure: the harness
		// compares them with the other runs to locate the divergence.
		run.SetEvents(res.Events)
		for name, value := range pinsOf(res.RunKey) {
			run.Pin(name, value)
		}
		return res.Transform.DiffBytes, err
	}
}

// pinsOf is a run key's five components as named pins, named as in the
// key's JSON: harness.Key of them is the key's String.
func pinsOf(k fallback.RunKey) map[string]string {
	return map[string]string{
		"cassette_id":            k.CassetteID,
		"store_digest":           k.StoreDigest,
		"repo_snapshot_sha":      k.RepoSnapshotSHA,
		"embedding_model_digest": k.EmbeddingModelDigest,
		"config_digest":          k.ConfigDigest,
	}
}

// contractConfig is the contract test's configuration for scenario's
// path.
func contractConfig(scenario, path string) harness.Config {
	return harness.Config{Iterations: iterations, Floor: floor, Budget: budget, Allowlist: allowlist,
		Cassette: cassettes.Config{Hint: refreshHint(scenario, path)}}
}

// TestContract is the determinism contract for every fixture scenario: 50 replay-only
// runs of the happy path and of the retry-bypass path, each in a fresh
// synctest bubble with a fresh tier, must give byte-identical DiffBytes and
// identical tapes modulo the allowlist.
//
// Every run is in replay mode and its dial attempts are counted: the gate
// fails if any run tried to reach a network.
func TestContract(t *testing.T) {
	dials := guardtest.CountDials(t)
	src := newSource(t).countingDials(dials)
	scs := fixtures.Scenarios()
	require.GreaterOrEqual(t, len(scs), 3, "the gate needs at least three fixture scenarios")
	for _, sc := range scs {
		for _, path := range paths {
			t.Run(sc.Name+"/"+path, func(t *testing.T) {
				if path == fallback.PathRetry {
					require.NotEmpty(t, sc.Prior, "scenario %s has no prior attempts for the retry path", sc.Name)
				}
				rep := contractConfig(sc.Name, path).Check(t, sc.Name+"/"+path, contractScenario(src, sc, path))
				if rep == nil || rep.Verdict != gate.Pass {
					return // Check reported the failure in full, or another shard runs it
				}
				require.Positive(t, rep.Events, "the tier records events")
				require.NotZero(t, rep.OutputDigest)
				require.Len(t, rep.Components, 5, "the run is pinned by its RunKey")
			})
		}
	}
	guardtest.NoDials(t, dials)
}

// TestKeyIsRunKey: the harness's key of a run's five pins is the
// fallback pipeline's RunKey.String(), so reports, result files and
// goldens name a run the same way.
func TestKeyIsRunKey(t *testing.T) {
	src := newSource(t)
	for _, sc := range fixtures.Scenarios() {
		res, err := runPipeline(t.Context(), src, sc, fallback.PathHappy, 0)
		require.NoError(t, err)
		require.Equal(t, res.RunKey.String(), harness.Key(pinsOf(res.RunKey)), sc.Name)
		require.Len(t, pinsOf(res.RunKey), 5)
	}
}

// BenchmarkContract measures one full 50-iteration contract test of each
// scenario (happy path), with the harness's isolation outside a bubble
// (benchmarks have no synctest), without evidence.
func BenchmarkContract(b *testing.B) {
	src := newSource(b)
	for _, sc := range fixtures.Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			cfg := contractConfig(sc.Name, fallback.PathHappy)
			for b.Loop() {
				rep, err := cfg.Iterate(b.Context(), sc.Name, contractScenario(src, sc, fallback.PathHappy))
				if err != nil {
					b.Fatal(rep)
				}
			}
		})
	}
}

// BenchmarkHarnessOverhead compares 50 runs of a scenario made by the
// harness (fresh goroutine and context per run, perturbation, leak check,
// digests and classes) with the same 50 runs in a plain loop under the
// same GOMAXPROCS schedule (1, 2, ..., 8, 1, ...): overhead-% is the
// harness's own cost. The plain loop is also timed at the default GOMAXPROCS:
// procs-schedule-% is what the schedule itself costs this pipeline, a
// property of the workload rather than of the harness. The loops alternate inside each b.Loop iteration so
// that load from other processes hits all alike; metrics are medians.
func BenchmarkHarnessOverhead(b *testing.B) {
	src := newSource(b)
	sc := fixtures.Scenarios()[0]
	s := contractScenario(src, sc, fallback.PathHappy)
	cfg := contractConfig(sc.Name, fallback.PathHappy)
	// The harness's default schedule, given to both loops explicitly.
	for p := 1; p <= max(runtime.NumCPU(), 8); p++ {
		cfg.Procs = append(cfg.Procs, p)
	}
	plain := func(schedule bool) time.Duration {
		prev := runtime.GOMAXPROCS(0)
		defer runtime.GOMAXPROCS(prev)
		start := time.Now()
		for i := range iterations {
			if schedule {
				runtime.GOMAXPROCS(cfg.Procs[i%len(cfg.Procs)])
			}
			if _, err := runPipeline(b.Context(), src, sc, fallback.PathHappy, i); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var def, bare, gated, overhead, sched []float64
	for b.Loop() {
		d := plain(false)
		p := plain(true)
		t0 := time.Now()
		if rep, err := cfg.Iterate(b.Context(), sc.Name, s); err != nil {
			b.Fatal(rep)
		}
		g := time.Since(t0)
		def, bare, gated = append(def, float64(d)), append(bare, float64(p)), append(gated, float64(g))
		overhead = append(overhead, 100*float64(g-p)/float64(p))
		sched = append(sched, 100*float64(p-d)/float64(d))
	}
	b.ReportMetric(median(def), "bare-default-procs-ns")
	b.ReportMetric(median(bare), "bare-ns")
	b.ReportMetric(median(gated), "harness-ns")
	b.ReportMetric(median(overhead), "overhead-%")
	b.ReportMetric(median(sched), "procs-schedule-%")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestCassetteSourceIsReplayOnly: a request no cassette recorded fails; it
// never reaches a network.
func TestCassetteSourceIsReplayOnly(t *testing.T) {
	src := newSource(t)
	c, done, err := src.open(fixtures.Scenarios()[0].Name, fallback.PathHappy)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://api.anthropic.com/v1/messages", strings.NewReader(`{"never":"recorded"}`))
	require.NoError(t, err)
	resp, err := c.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	require.ErrorIs(t, err, cassettes.ErrInteractionNotFound)
	require.Error(t, done(), "the recorded interactions were left unused")
}
