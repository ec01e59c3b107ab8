package harness_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/hint"
)

var (
	recordCassette = harness.RecordCassetteForTest
	complete       = harness.CompleteForTest
)

// mapPrompt builds its prompt by ranging over a two-key map: the bug.
func mapPrompt(cassette string) harness.Scenario {
	return func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		var sb strings.Builder
		for k, v := range map[string]string{"lang": "go", "task": "bump"} {
			fmt.Fprintf(&sb, "%s=%s;", k, v)
		}
		if _, err := run.Recorder().Emit("text.composed", sb.String()); err != nil {
			return nil, err
		}
		text, err := complete(ctx, client, sb.String())
		if err != nil {
			return nil, err
		}
		return []byte(text), nil
	}
}

// TestTwoKeyMapPrompt gates a pipeline whose prompt reads a two-key map
// 100 times. Go picks the rarer order of two keys in about 1 run in 8; the
// cassette holds the common one, so the rare runs miss it. Every gate must
// say NONDETERMINISTIC with both class sizes, also when run 0 took the
// rare order, and never suggest re-recording.
//
// A gate of 50 runs sees only the common order with probability
// (7/8)^50 = 0.13%; these gates make 100 runs (1.6e-6) so the test is not
// itself flaky.
func TestTwoKeyMapPrompt(t *testing.T) {
	gates := 100
	if testing.Short() || harness.RaceEnabledForTest() {
		gates = 10
	}
	cassette := recordCassette(t, t.TempDir(), "two-keys", "lang=go;task=bump;")
	rareFirst := 0
	for g := range gates {
		rep, err := harness.Config{Iterations: 100, ArtifactDir: t.TempDir()}.Iterate(t.Context(), "two-key-map", mapPrompt(cassette))
		require.ErrorIs(t, err, harness.ErrNondeterministic, "gate %d:\n%s", g, rep)
		require.Equal(t, gate.Nondeterministic, rep.Verdict)
		require.Len(t, rep.Classes, 2, "gate %d: one class per map order", g)
		require.Equal(t, 100, rep.Classes[0].Runs+rep.Classes[1].Runs)
		require.Contains(t, rep.Summary(), fmt.Sprintf("%d+%d", rep.Classes[0].Runs, rep.Classes[1].Runs))
		require.True(t, rep.Divergence.RequestVaries, "the classes differ in the request")
		text := rep.String()
		require.Contains(t, text, "the request itself varies between runs")
		require.Empty(t, rep.ReRecordCommand)
		require.NotContains(t, text, "re-record it")
		// Which class missed the cassette does not matter to the verdict.
		for i, c := range rep.Classes {
			if c.FirstRun == 0 && i == 1 {
				rareFirst++
			}
		}
	}
	t.Logf("%d gates, all NONDETERMINISTIC; run 0 took the rarer order in %d of them", gates, rareFirst)
}

// TestAlwaysMissIsBroken: a pipeline that always misses its cassette is
// BROKEN, and that (only that) suggests re-recording.
func TestAlwaysMissIsBroken(t *testing.T) {
	cassette := recordCassette(t, t.TempDir(), "recorded", "the recorded prompt")
	cfg := harness.Config{ArtifactDir: t.TempDir(), ReproCommand: "go test -run '^TestX$' ./pipeline"}
	rep, err := cfg.Iterate(t.Context(), "always-miss", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		text, err := complete(ctx, client, "a prompt the cassette never saw")
		return []byte(text), err
	})
	require.ErrorIs(t, err, harness.ErrBroken)
	require.Equal(t, gate.Broken, rep.Verdict)
	require.Len(t, rep.Classes, 1)
	require.Equal(t, harness.ErrorKindCassetteMiss, rep.Classes[0].ErrorKind)
	require.Equal(t, 50, rep.Classes[0].Runs)
	require.True(t, strings.HasSuffix(rep.ReRecordCommand, " && "+cfg.ReproCommand+` '-cassettes.record=recorded\.yaml$'`), rep.ReRecordCommand)
	require.Contains(t, rep.String(), "re-record it: "+rep.ReRecordCommand)
	require.Equal(t, 1, strings.Count(rep.String(), "-cassettes.record="), "one re-record command, none in the miss text:\n%s", rep)
	var rr []gate.Command
	for _, c := range rep.Commands {
		if c.Purpose == hint.PurposeReRecord {
			rr = append(rr, c)
		}
	}
	require.Len(t, rr, 1)
	require.Equal(t, []string{"go", "test", "-run", "^TestX$", "./pipeline", `-cassettes.record=recorded\.yaml$`}, rr[0].Argv)
}

// TestSwallowedMissStillFails: a run whose pipeline ignores the miss
// still fails, and so does one that leaves the cassette unused.
func TestSwallowedMissStillFails(t *testing.T) {
	cassette := recordCassette(t, t.TempDir(), "recorded", "the recorded prompt")
	rep, err := harness.Config{ArtifactDir: t.TempDir()}.Iterate(t.Context(), "swallowed", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		_, _ = complete(ctx, client, "another prompt")
		return []byte("fallback answer"), nil
	})
	require.ErrorIs(t, err, harness.ErrBroken)
	require.Equal(t, harness.ErrorKindCassetteMiss, rep.Classes[0].ErrorKind)

	rep, err = harness.Config{ArtifactDir: t.TempDir()}.Iterate(t.Context(), "unused", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		_, err := run.Client(cassette)
		return []byte("never asked"), err
	})
	require.ErrorIs(t, err, harness.ErrBroken)
	require.Equal(t, harness.ErrorKindCassetteUnused, rep.Classes[0].ErrorKind)
	require.Empty(t, rep.ReRecordCommand, "outside a test, with no reproduce command, there is no command to extend")
}

// TestSwallowedMissAnsweredAsResponse: a miss the cassette answers as a
// response (to a client that sends X-Stainless-* headers, as openai-go
// and anthropic-sdk-go do) is counted as a miss, even when the pipeline
// never reads the response.
func TestSwallowedMissAnsweredAsResponse(t *testing.T) {
	cassette := recordCassette(t, t.TempDir(), "recorded", "the recorded prompt")
	rep, err := harness.Config{ArtifactDir: t.TempDir()}.Iterate(t.Context(), "swallowed-response", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.example.test/v1/complete", strings.NewReader(`{"prompt":"another prompt"}`))
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Stainless-Retry-Count", "0")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("X-Should-Retry") != "false" {
			return nil, fmt.Errorf("want the miss as a response, got %s", resp.Status)
		}
		return []byte("fallback answer"), resp.Body.Close()
	})
	require.ErrorIs(t, err, harness.ErrBroken)
	require.Equal(t, harness.ErrorKindCassetteMiss, rep.Classes[0].ErrorKind, "%s", rep)
}

// TestClientPerRun: each run gets a freshly opened cassette, so a pipeline
// that calls once per run passes 50 runs of a one-interaction cassette.
func TestClientPerRun(t *testing.T) {
	t.Parallel()
	cassette := recordCassette(t, t.TempDir(), "once", "hello")
	var ids []string
	rep := harness.Check(t, "per-run", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		ids = append(ids, client.Transport.(interface{ CassetteID() string }).CassetteID())
		text, err := complete(ctx, client, "hello")
		return []byte(text), err
	})
	require.Equal(t, gate.Pass, rep.Verdict)
	id, err := cassettes.Digest(cassette)
	require.NoError(t, err)
	require.Equal(t, id, ids[0], "the client's transport reports the cassette digest")
}

// TestAbsentCassetteIsNamed: a cassette that does not exist yet is named
// by the command that records it.
func TestAbsentCassetteIsNamed(t *testing.T) {
	cfg := harness.Config{Iterations: 20, ArtifactDir: t.TempDir(), ReproCommand: "go test -run '^TestX$' ./pipeline"}
	missing := t.TempDir() + "/not-yet.yaml"
	rep, err := cfg.Iterate(t.Context(), "absent", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		_, err := run.Client(missing)
		return nil, err
	})
	require.ErrorIs(t, err, harness.ErrBroken)
	require.True(t, strings.HasSuffix(rep.ReRecordCommand, `'-cassettes.record=not-yet\.yaml$'`), rep.ReRecordCommand)
}
