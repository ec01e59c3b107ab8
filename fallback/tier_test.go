package fallback_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/guard"
	"github.com/codegenie/codegenie/internal/fakellm"
	"github.com/codegenie/codegenie/llm"
	"github.com/codegenie/codegenie/prompt"
	"github.com/codegenie/codegenie/rag"
)

// fakeTier returns a tier wired like fixtures.NewTier but over a fakellm
// server in the given mode.
func fakeTier(t testing.TB, mode fakellm.Mode, stream bool) *fallback.Tier {
	t.Helper()
	client := &http.Client{Transport: fakellm.New(fakellm.Config{Mode: mode}).Transport()}
	tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: client, Stream: stream})
	require.NoError(t, err)
	return tier
}

func scenario(t testing.TB, name string) fixtures.Scenario {
	t.Helper()
	s, ok := fixtures.Lookup(name)
	require.True(t, ok, "scenario %q", name)
	return s
}

func kinds(evs []events.Event) []events.Kind {
	ks := make([]events.Kind, 0, len(evs))
	for _, e := range evs {
		ks = append(ks, e.Kind)
	}
	return ks
}

var happyKinds = []events.Kind{
	fallback.KindRunStarted, fallback.KindRetrievalQueried, fallback.KindRetrievalRanked,
	fallback.KindBandClassified, fallback.KindPromptBuilt, fallback.KindLLMRequested,
	fallback.KindLLMResponded, fallback.KindTransformProduced,
}

// checkTape checks the structural invariants of a run's tape: dense Seq
// from 1, each event the child of the previous one, digests matching.
func checkTape(t testing.TB, evs []events.Event) {
	t.Helper()
	for i, e := range evs {
		require.Equal(t, uint64(i+1), e.Seq, "event %d", i)
		require.Equal(t, uint64(i), e.Parent, "event %d parent", i)
		require.NoError(t, e.Verify(), "event %d", i)
	}
}

func payload(t testing.TB, e events.Event) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(e.Payload, &m))
	return m
}

func TestRunHappyPath(t *testing.T) {
	s := scenario(t, "npm-lodash")
	tier := fakeTier(t, fakellm.Normal, false)
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.NoError(t, err)
	require.Equal(t, happyKinds, kinds(res.Events))
	checkTape(t, res.Events)
	require.Equal(t, fallback.PathHappy, res.Path)

	key, err := tier.RunKey(s.Repo)
	require.NoError(t, err)
	require.Equal(t, key, res.RunKey)
	started := payload(t, res.Events[0])
	require.Equal(t, "happy", started["path"])
	require.Equal(t, key.String(), started["run_key_digest"])
	rk := started["run_key"].(map[string]any)
	require.Equal(t, key.RepoSnapshotSHA, rk["repo_snapshot_sha"])
	require.Equal(t, key.StoreDigest, rk["store_digest"])
	require.Equal(t, key.EmbeddingModelDigest, rk["embedding_model_digest"])
	require.Equal(t, key.ConfigDigest, rk["config_digest"])
	require.Equal(t, "", rk["cassette_id"])

	built := payload(t, res.Events[4])
	require.Equal(t, prompt.TemplateVersion, built["template_version"])
	require.NotEmpty(t, built["user"])
	require.NotEmpty(t, built["system"])

	produced := payload(t, res.Events[7])
	require.Equal(t, string(res.Transform.DiffBytes), produced["diff"])
	require.Contains(t, string(res.Transform.DiffBytes), `+    "lodash": "^4.17.21",`)
	require.Equal(t, []any{"package.json"}, produced["files"])
}

func TestRunRetryPath(t *testing.T) {
	s := scenario(t, "pypi-requests")
	require.NotEmpty(t, s.Prior)
	tier := fakeTier(t, fakellm.Normal, false)
	happy, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.NoError(t, err)
	retry, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, s.Prior)
	require.NoError(t, err)
	require.Equal(t, fallback.PathRetry, retry.Path)
	require.Equal(t, happyKinds, kinds(retry.Events))
	require.Equal(t, "retry", payload(t, retry.Events[0])["path"])
	built := payload(t, retry.Events[4])
	require.EqualValues(t, len(s.Prior), built["attempts"])
	require.Contains(t, built["user"], s.Prior[0].Outcome, "the prior attempt's summary is in the prompt")
	require.NotEqual(t, events.Chain(happy.Events, events.Nondeterministic), events.Chain(retry.Events, events.Nondeterministic))
	require.Equal(t, happy.Transform.DiffBytes, retry.Transform.DiffBytes)
}

// FailFirst answers garbage without prior attempts and the fix with them:
// the retry-bypass path is what recovers.
func TestRunRetryRecovers(t *testing.T) {
	s := scenario(t, "go-xnet")
	tier := fakeTier(t, fakellm.FailFirst, false)
	_, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.ErrorIs(t, err, fallback.ErrUnusableCompletion)
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, s.Prior)
	require.NoError(t, err)
	require.Contains(t, string(res.Transform.DiffBytes), "+\tgolang.org/x/net v0.23.0")
}

func TestRunStreamingGivesSameDiff(t *testing.T) {
	for _, s := range fixtures.Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			a, err := fakeTier(t, fakellm.Normal, false).Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
			require.NoError(t, err)
			b, err := fakeTier(t, fakellm.Normal, true).Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
			require.NoError(t, err)
			require.Equal(t, string(a.Transform.DiffBytes), string(b.Transform.DiffBytes))
			require.NotEqual(t, a.RunKey, b.RunKey, "streaming is an adapter setting and part of the pin")
		})
	}
}

// stubAdapter answers a fixed text, or panics.
type stubAdapter struct {
	text  string
	err   error
	panic any
}

func (s stubAdapter) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if s.panic != nil {
		panic(s.panic)
	}
	return llm.Response{Text: s.text, Model: "stub-model", StopReason: "end_turn", ID: "msg_stub"}, s.err
}

func (s stubAdapter) Settings() llm.Settings {
	return llm.Settings{Provider: "stub", Model: "stub-model"}
}

// panicEmbedder panics on Embed.
type panicEmbedder struct{ rag.Embedder }

func (panicEmbedder) Embed(context.Context, []string) ([][]float64, error) {
	panic("embedder exploded")
}

func TestRunBadInput(t *testing.T) {
	s := scenario(t, "npm-lodash")
	stubTier := func(text string) func(testing.TB) *fallback.Tier {
		return func(t testing.TB) *fallback.Tier {
			tier := fakeTier(t, fakellm.Normal, false)
			tier.Adapter = stubAdapter{text: text}
			return tier
		}
	}
	modeTier := func(m fakellm.Mode, stream bool) func(testing.TB) *fallback.Tier {
		return func(t testing.TB) *fallback.Tier { return fakeTier(t, m, stream) }
	}
	normal := modeTier(fakellm.Normal, false)
	bigRepo := fallback.RepoContext{Files: append(s.Repo.Files[:0:0], s.Repo.Files...)}
	bigRepo.Files = append(bigRepo.Files, prompt.File{Path: "dist/bundle.js", Content: []byte(strings.Repeat("x", prompt.DefaultMaxFileBytes+1))})
	outside := "--- a/yarn.lock\n+++ b/yarn.lock\n@@ -1 +1 @@\n-lodash@4.17.20\n+lodash@4.17.21\n"

	for _, tc := range []struct {
		name     string
		tier     func(testing.TB) *fallback.Tier
		adv      func(*fallback.Advisory)
		repo     *fallback.RepoContext
		is       error  // errors.Is target
		kind     string // transform.failed "kind"
		reason   string // transform.failed "reason", for unusable answers
		nEvents  int    // events before the failure event
		wantStep string
	}{
		{name: "empty advisory", tier: normal, adv: func(a *fallback.Advisory) { *a = fallback.Advisory{} }, is: prompt.ErrEmptyAdvisory, kind: "invalid-input", nEvents: 1, wantStep: "validate"},
		{name: "advisory without text", tier: normal, adv: func(a *fallback.Advisory) { a.Summary, a.Details = "", "" }, is: prompt.ErrEmptyAdvisory, kind: "invalid-input", nEvents: 1, wantStep: "validate"},
		{name: "repo with no files", tier: normal, repo: &fallback.RepoContext{}, is: prompt.ErrNoFiles, kind: "invalid-input", nEvents: 1, wantStep: "validate"},
		{name: "oversized file", tier: normal, repo: &bigRepo, is: prompt.ErrFileTooLarge, kind: "invalid-input", nEvents: 1, wantStep: "validate"},
		{name: "invalid repo path", tier: normal, repo: &fallback.RepoContext{Files: []prompt.File{{Path: "../etc/passwd", Content: []byte("x")}}}, is: fallback.ErrInvalidRepo, kind: "invalid-repo", nEvents: 0, wantStep: "validate"},
		{name: "thresholds low above high", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.Thresholds = rag.Thresholds{Low: 0.8, High: 0.2}
			return tier
		}, is: rag.ErrBadThresholds, kind: "invalid-config", nEvents: 1, wantStep: "validate"},
		{name: "thresholds above one", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.Thresholds = rag.Thresholds{Low: 0.5, High: 1.5}
			return tier
		}, is: rag.ErrBadThresholds, kind: "invalid-config", nEvents: 1, wantStep: "validate"},
		{name: "thresholds negative", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.Thresholds = rag.Thresholds{Low: -0.1, High: 0.5}
			return tier
		}, is: rag.ErrBadThresholds, kind: "invalid-config", nEvents: 1, wantStep: "validate"},
		{name: "thresholds NaN", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.Thresholds = rag.Thresholds{Low: math.NaN(), High: 0.5}
			return tier
		}, is: rag.ErrBadThresholds, kind: "invalid-config", nEvents: 1, wantStep: "validate"},
		{name: "negative K", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.K = -1
			return tier
		}, is: fallback.ErrInvalidConfig, kind: "invalid-config", nEvents: 1, wantStep: "validate"},
		{name: "no adapter", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.Adapter = nil
			return tier
		}, is: fallback.ErrInvalidConfig, kind: "invalid-config", nEvents: 1, wantStep: "validate"},
		{name: "garbage answer", tier: modeTier(fakellm.Garbage, false), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonMalformed, nEvents: 7, wantStep: "transform.produced"},
		{name: "answer without diff", tier: modeTier(fakellm.NoDiff, false), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonNoDiff, nEvents: 7, wantStep: "transform.produced"},
		{name: "diff that does not apply", tier: modeTier(fakellm.NonApplying, false), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonDoesNotApply, nEvents: 7, wantStep: "transform.produced"},
		{name: "empty answer", tier: modeTier(fakellm.Empty, false), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonEmptyResponse, nEvents: 7, wantStep: "transform.produced"},
		{name: "truncated stream", tier: modeTier(fakellm.Truncated, true), is: llm.ErrTruncatedStream, kind: "llm", nEvents: 6, wantStep: "llm.responded"},
		{name: "http error", tier: modeTier(fakellm.HTTPError, false), kind: "llm-api", nEvents: 6, wantStep: "llm.responded"},
		{name: "diff touching a file not in the repo", tier: stubTier(prompt.FormatAnswer([]byte(outside))), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonUnknownFile, nEvents: 7, wantStep: "transform.produced"},
		{name: "diff creating a file", tier: stubTier(prompt.FormatAnswer([]byte("--- /dev/null\n+++ b/.npmrc\n@@ -0,0 +1 @@\n+audit=true\n"))), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonUnsupported, nEvents: 7, wantStep: "transform.produced"},
		{name: "prose answer", tier: stubTier("Sure! Just upgrade lodash."), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonNoDiff, nEvents: 7, wantStep: "transform.produced"},
		{name: "huge garbage answer", tier: stubTier("```diff\n" + strings.Repeat("garbage ", 10000) + "\n```\n"), is: fallback.ErrUnusableCompletion, kind: "unusable-completion", reason: fallback.ReasonMalformed, nEvents: 7, wantStep: "transform.produced"},
		{name: "adapter panics", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.Adapter = stubAdapter{panic: "adapter exploded"}
			return tier
		}, is: fallback.ErrPanic, kind: "panic", nEvents: 6, wantStep: "llm.responded"},
		{name: "embedder panics", tier: func(t testing.TB) *fallback.Tier {
			tier := normal(t)
			tier.Embedder = panicEmbedder{Embedder: tier.Embedder}
			return tier
		}, is: fallback.ErrPanic, kind: "panic", nEvents: 2, wantStep: "retrieval.ranked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adv := s.Advisory
			if tc.adv != nil {
				tc.adv(&adv)
			}
			repo := s.Repo
			if tc.repo != nil {
				repo = *tc.repo
			}
			var (
				res fallback.Result
				err error
			)
			require.NotPanics(t, func() {
				res, err = tc.tier(t).Run(context.Background(), adv, repo, s.Recipe, nil)
			})
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is, "%v", err)
			}
			var rerr *fallback.RunError
			require.ErrorAs(t, err, &rerr)
			require.Equal(t, tc.wantStep, rerr.Step)
			require.Empty(t, res.Transform.DiffBytes)

			require.Len(t, res.Events, tc.nEvents+1, "%# v", pretty.Formatter(kinds(res.Events)))
			require.Equal(t, happyKinds[:tc.nEvents], kinds(res.Events[:tc.nEvents]))
			checkTape(t, res.Events)
			last := res.Events[len(res.Events)-1]
			require.Equal(t, fallback.KindTransformFailed, last.Kind)
			p := payload(t, last)
			require.Equal(t, tc.kind, p["kind"], "%v", err)
			require.Equal(t, tc.wantStep, p["step"])
			require.Equal(t, tc.reason, p["reason"])
			require.LessOrEqual(t, len(p["excerpt"].(string)), fallback.MaxExcerpt)
			if tc.reason != "" {
				var uerr *fallback.UnusableCompletionError
				require.ErrorAs(t, err, &uerr)
				require.Equal(t, tc.reason, uerr.Reason)
				require.LessOrEqual(t, len(uerr.Excerpt), fallback.MaxExcerpt)
			}

			// A failing run is as deterministic as a passing one.
			again, err2 := tc.tier(t).Run(context.Background(), adv, repo, s.Recipe, nil)
			require.Equal(t, err.Error(), err2.Error())
			require.Equal(t, events.Chain(res.Events, events.Nondeterministic), events.Chain(again.Events, events.Nondeterministic))
		})
	}
}

func TestRunCanceledContext(t *testing.T) {
	s := scenario(t, "npm-lodash")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := fakeTier(t, fakellm.Normal, false).Run(ctx, s.Advisory, s.Repo, s.Recipe, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, fallback.KindTransformFailed, res.Events[len(res.Events)-1].Kind)
}

// cassetteTransport is a RoundTripper that claims a cassette.
type cassetteTransport struct {
	http.RoundTripper
	id string
}

func (c cassetteTransport) CassetteID() string { return c.id }

func TestRunKeyCassetteID(t *testing.T) {
	s := scenario(t, "go-xnet")
	tier := fakeTier(t, fakellm.Normal, false)
	plain, err := tier.RunKey(s.Repo)
	require.NoError(t, err)
	require.Empty(t, plain.CassetteID)

	tier.HTTPClient = &http.Client{Transport: cassetteTransport{RoundTripper: tier.HTTPClient.Transport, id: "cassette-digest-1"}}
	var _ fallback.CassetteIdentifier = cassetteTransport{}
	withCassette, err := tier.RunKey(s.Repo)
	require.NoError(t, err)
	require.Equal(t, "cassette-digest-1", withCassette.CassetteID)
	require.NotEqual(t, plain.String(), withCassette.String())
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.NoError(t, err)
	require.Equal(t, withCassette, res.RunKey)
}

// Each input of the pin changes the ConfigDigest; equal configurations
// built differently pin equally.
func TestPinSensitivity(t *testing.T) {
	s := scenario(t, "npm-lodash")
	base := fakeTier(t, fakellm.Normal, false)
	baseKey, err := base.RunKey(s.Repo)
	require.NoError(t, err)

	explicit := *base
	explicit.Limits = prompt.Limits{MaxFileBytes: prompt.DefaultMaxFileBytes, MaxTotalBytes: prompt.DefaultMaxTotalBytes}
	k, err := explicit.RunKey(s.Repo)
	require.NoError(t, err)
	require.Equal(t, baseKey, k, "explicit defaults pin like zero values")

	for _, tc := range []struct {
		name   string
		change func(*fallback.Tier)
	}{
		{"threshold low", func(t *fallback.Tier) { t.Thresholds.Low += 0.01 }},
		{"threshold high", func(t *fallback.Tier) { t.Thresholds.High += 0.01 }},
		{"K", func(t *fallback.Tier) { t.K++ }},
		{"file limit", func(t *fallback.Tier) { t.Limits.MaxFileBytes = 1000 }},
		{"total limit", func(t *fallback.Tier) { t.Limits.MaxTotalBytes = 1000 }},
		{"adapter settings", func(t *fallback.Tier) { t.Adapter = stubAdapter{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := *base
			tc.change(&changed)
			k, err := changed.RunKey(s.Repo)
			require.NoError(t, err)
			require.NotEqual(t, baseKey.ConfigDigest, k.ConfigDigest)
			require.NotEqual(t, baseKey.String(), k.String())
			require.Equal(t, baseKey.StoreDigest, k.StoreDigest)
		})
	}
}

func TestModelNameIsPinned(t *testing.T) {
	s := scenario(t, "npm-lodash")
	a, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
	require.NoError(t, err)
	b, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient(), Model: "claude-opus-4-1"})
	require.NoError(t, err)
	ka, err := a.RunKey(s.Repo)
	require.NoError(t, err)
	kb, err := b.RunKey(s.Repo)
	require.NoError(t, err)
	require.NotEqual(t, ka.ConfigDigest, kb.ConfigDigest)
	pa, err := a.Pin()
	require.NoError(t, err)
	require.Equal(t, fixtures.DefaultModel, pa.Model)
	require.Equal(t, prompt.TemplateVersion, pa.TemplateVersion)
}

func TestRunConcurrentUse(t *testing.T) {
	tier := fakeTier(t, fakellm.Normal, false)
	scs := fixtures.Scenarios()
	want := make([]events.Digest, len(scs))
	for i, s := range scs {
		res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, s.Prior)
		require.NoError(t, err)
		want[i] = events.Chain(res.Events, events.Nondeterministic)
	}
	var wg sync.WaitGroup
	got := make([]events.Digest, 4*len(scs))
	errs := make([]error, len(got))
	for i := range got {
		wg.Go(func() {
			s := scs[i%len(scs)]
			res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, s.Prior)
			got[i], errs[i] = events.Chain(res.Events, events.Nondeterministic), err
		})
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		require.Equal(t, want[i%len(scs)], got[i], "run %d", i)
	}
}

func TestRunEventsCarryInjectedClockAndIDs(t *testing.T) {
	s := scenario(t, "npm-lodash")
	tier := fakeTier(t, fakellm.Normal, false)
	plain, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.NoError(t, err)
	n := 0
	tier.Events.NewID = func() string { n++; return "audit-" + strings.Repeat("x", n) }
	stamped, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.NoError(t, err)
	require.NotEqual(t, plain.Events[0].AuditEventID, stamped.Events[0].AuditEventID)
	require.Equal(t, events.Chain(plain.Events, events.Nondeterministic), events.Chain(stamped.Events, events.Nondeterministic), "the allowlisted fields are stripped from the chain digest")
}

// The zero Tier with only an adapter runs: no store (so no examples), the
// default embedder, thresholds, K and limits.
func TestZeroTierWithAdapter(t *testing.T) {
	s := scenario(t, "npm-lodash")
	ad, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", Model: "m", HTTPClient: fixtures.FakeHTTPClient()})
	require.NoError(t, err)
	tier := &fallback.Tier{Adapter: ad}
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.NoError(t, err)
	require.Equal(t, happyKinds, kinds(res.Events))
	require.Equal(t, []any{}, payload(t, res.Events[2])["results"])
	require.EqualValues(t, 0, payload(t, res.Events[4])["examples"])
	pin, err := tier.Pin()
	require.NoError(t, err)
	require.Equal(t, rag.DefaultK, pin.K)
	require.Equal(t, "0.45", pin.ThresholdLow)
	require.Contains(t, string(res.Transform.DiffBytes), "4.17.21")
}

func TestRunNilTier(t *testing.T) {
	s := scenario(t, "npm-lodash")
	var tier *fallback.Tier
	var (
		res fallback.Result
		err error
	)
	require.NotPanics(t, func() { res, err = tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil) })
	require.ErrorIs(t, err, fallback.ErrInvalidConfig)
	require.Equal(t, []events.Kind{fallback.KindTransformFailed}, kinds(res.Events))
}

// Even a panicking clock (an injected dependency of the recorder) gives an
// error, not a panic.
func TestRunPanickingClock(t *testing.T) {
	s := scenario(t, "npm-lodash")
	tier := fakeTier(t, fakellm.Normal, false)
	tier.Events.Clock = func() time.Time { panic("clock exploded") }
	var err error
	require.NotPanics(t, func() { _, err = tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil) })
	require.ErrorIs(t, err, fallback.ErrPanic)
}

// With LiveStamps a run takes the wall clock and random IDs from the
// replay guard: they fill the stamps outside replay mode and refuse the run
// in replay mode, before any step.
func TestRunLiveStamps(t *testing.T) {
	s := scenario(t, "npm-lodash")
	tier := fakeTier(t, fakellm.Normal, false)
	tier.LiveStamps = true
	res, err := tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.NoError(t, err)
	require.False(t, res.Events[0].EmittedAt.IsZero())
	require.Len(t, res.Events[0].AuditEventID, 36, "a random UUID")
	require.NotEqual(t, res.Events[0].AuditEventID, res.Events[1].AuditEventID)

	res, err = tier.Run(guard.WithReplay(context.Background()), s.Advisory, s.Repo, s.Recipe, nil)
	var rme *guard.ReplayModeError
	require.ErrorAs(t, err, &rme)
	require.Equal(t, guard.OpWallClock, rme.Op)
	require.Equal(t, []events.Kind{fallback.KindTransformFailed}, kinds(res.Events), "refused before any step")

	tier.Events.Clock = time.Now
	_, err = tier.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, nil)
	require.ErrorIs(t, err, fallback.ErrInvalidConfig)
}

// The example-vector cache cannot change an outcome: runs that embed the
// store, runs that fill a shared cache and runs served from it give the
// same transform and the same tape, for every scenario and path.
func TestVectorCacheDoesNotChangeOutcomes(t *testing.T) {
	cache := rag.NewVectorCache(0)
	for _, s := range fixtures.Scenarios() {
		for _, prior := range [][]fallback.AttemptSummary{nil, s.Prior} {
			plain := fakeTier(t, fakellm.Normal, false)
			plain.Vectors = nil
			want, err := plain.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, prior)
			require.NoError(t, err)
			for range 2 { // a miss that fills the cache, then a hit
				cached := fakeTier(t, fakellm.Normal, false)
				cached.Vectors = cache
				got, err := cached.Run(context.Background(), s.Advisory, s.Repo, s.Recipe, prior)
				require.NoError(t, err)
				require.Equal(t, want.Transform.DiffBytes, got.Transform.DiffBytes, s.Name)
				require.Equal(t, events.Chain(want.Events, events.Nondeterministic), events.Chain(got.Events, events.Nondeterministic), s.Name)
			}
		}
	}
	require.Equal(t, 1, cache.Len(), "every scenario uses the one fixture store and embedder")
}
