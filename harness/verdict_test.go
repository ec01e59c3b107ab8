package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/gateflags"
	"github.com/codegenie/codegenie/internal/hint"
)

// echoCassette is a committed cassette of three calls (prompts alpha,
// beta, gamma) to echoAPI, at a path inside the module, so that child
// processes open the same file.
const echoCassette = "testdata/echo.yaml"

// TestVaryingRequestIsNondeterministic: a request field read from the
// clock makes every run send a different request, so every run misses
// the cassette differently. The classes tell the requests apart: the
// verdict is NONDETERMINISTIC on the first gate, naming the field that
// varies, and no re-record command appears anywhere in the report.
func TestVaryingRequestIsNondeterministic(t *testing.T) {
	t.Parallel()
	rep := Config{Iterations: 20, Processes: 2, ArtifactDir: t.TempDir()}.check(t, "time-in-request", func(ctx context.Context, run *Run) ([]byte, error) {
		client, err := run.Client(echoCassette)
		if err != nil {
			return nil, err
		}
		text, err := complete(ctx, client, "alpha at "+time.Now().Format(time.RFC3339Nano))
		return []byte(text), err
	}, false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Len(t, rep.Classes, 20, "every run sent another request")
	require.True(t, rep.Divergence.RequestVaries, "%s", rep)
	require.Len(t, rep.Divergence.RequestDiff, 1, "%s", rep)
	require.Contains(t, rep.Divergence.RequestDiff[0], `body ["prompt"]: "alpha at `)
	text := rep.String()
	require.Contains(t, text, "the request itself varies between runs")
	require.Empty(t, rep.ReRecordCommand)
	for _, c := range rep.Commands {
		require.NotEqual(t, hint.PurposeReRecord, c.Purpose)
	}
	for _, bad := range []string{"-cassettes.record", "re-record it:", "re-record with: cd", "re-record with: go"} {
		require.NotContains(t, text, bad, "a nondeterminism never suggests re-recording")
	}
}

// TestDeterministicChangeIsBroken: a deliberate prompt change misses the
// cassette the same way in every run, in the test process and in child
// processes (which run below another working directory), even when the
// scenario opens the cassette by an absolute path and records the error
// in its tape: BROKEN, with exactly one re-record command.
func TestDeterministicChangeIsBroken(t *testing.T) {
	t.Parallel()
	rep := Config{Iterations: 20, Processes: 4}.check(t, "prompt-changed", func(ctx context.Context, run *Run) ([]byte, error) {
		abs, err := filepath.Abs(echoCassette)
		if err != nil {
			return nil, err
		}
		client, err := run.Client(abs)
		if err != nil {
			return nil, err
		}
		text, err := complete(ctx, client, "alpha, reworded")
		if err != nil {
			_, _ = run.Recorder().Emit("call.failed", err.Error())
		}
		return []byte(text), err
	}, false)
	require.Equal(t, gate.Broken, rep.Verdict, "%s", rep)
	require.Len(t, rep.Classes, 1)
	require.Equal(t, 4, len(rep.ClassProcesses(0)), "the child processes agree")
	require.Equal(t, ErrorKindCassetteMiss, rep.Classes[0].ErrorKind)
	require.Contains(t, rep.Classes[0].Message, "POST https://api.example.test/v1/complete missed testdata/echo.yaml:", "the path is named from the package directory, as the test opens it")
	require.NotContains(t, rep.Classes[0].Message, roots().seen)
	text := rep.String()
	require.Equal(t, 1, strings.Count(text, "-cassettes.record="), "%s", text)
	require.Contains(t, text, "re-record it: "+rep.ReRecordCommand)
	require.Contains(t, rep.ReRecordCommand, `go test ./harness -run '^TestDeterministicChangeIsBroken$' -count=1 '-cassettes.record=echo\.yaml$'`)
}

// TestConcurrentRequestsNotBlamed: three concurrent calls whose order of
// arrival differs between runs, with identical requests, and an output
// that differs for another reason: the requests are compared as sets, so
// the report does not say the request varies.
func TestConcurrentRequestsNotBlamed(t *testing.T) {
	prompts := []string{"alpha", "beta", "gamma"}
	rep, err := Config{Iterations: 20, ArtifactDir: t.TempDir()}.Iterate(t.Context(), "concurrent", func(ctx context.Context, run *Run) ([]byte, error) {
		client, err := run.Client(echoCassette)
		if err != nil {
			return nil, err
		}
		// The calls arrive in an order that depends on the run.
		order := slices.Clone(prompts)
		k := (run.Index() + 1) % 3
		order = append(order[k:], order[:k]...)
		answers := make([]string, 3)
		var mu sync.Mutex
		for i, p := range order {
			done := make(chan struct{})
			go func() {
				defer close(done)
				a, err := complete(ctx, client, p)
				mu.Lock()
				answers[i] = a + fmt.Sprint(err)
				mu.Unlock()
			}()
			<-done
		}
		slices.Sort(answers)
		// The bug: the output depends on the run (think: a map's order).
		return []byte(fmt.Sprint(run.Index()%2, answers)), nil
	})
	require.ErrorIs(t, err, ErrNondeterministic)
	require.Len(t, rep.Classes, 2, "%s", rep)
	require.NotNil(t, rep.Divergence.Output)
	require.False(t, rep.Divergence.RequestVaries, "the same requests in another order:\n%s", rep)
	require.NotContains(t, rep.String(), "the request itself varies")
}

// TestOpenForkJoined: a scenario that returns an error before joining
// its fork keeps its lanes' events on the tape, so the failing runs'
// tapes are compared in full.
func TestOpenForkJoined(t *testing.T) {
	rep, err := Config{Iterations: 20, ArtifactDir: t.TempDir()}.Iterate(t.Context(), "open-fork", func(ctx context.Context, run *Run) ([]byte, error) {
		seq, err := run.Recorder().Emit("job.started", nil)
		if err != nil {
			return nil, err
		}
		f := run.Recorder().Fork(seq)
		for _, lane := range []string{"a", "b"} {
			if err := f.Lane(lane).Emit("call.made", lane); err != nil {
				return nil, err
			}
		}
		return nil, errors.New("lane b failed; returned before Join")
	})
	require.ErrorIs(t, err, ErrBroken)
	require.Equal(t, 3, rep.Events, "the lanes' events are on the tape:\n%s", rep)
}

// TestEvidenceHome: without -gate.evidence or -artifacts, a failing
// gate's evidence goes to a directory of the test's own in the user's
// cache directory, outside the source tree, the same for every run of
// the test and another for another test.
func TestEvidenceHome(t *testing.T) {
	t.Parallel()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache directory:", err)
	}
	d := evidenceHome(t, gateflags.Settings{})
	require.Equal(t, filepath.Join(cache, "codegenie", "evidence"), filepath.Dir(d))
	require.True(t, strings.HasPrefix(filepath.Base(d), "github.com_codegenie_codegenie_harness_TestEvidenceHome_"), d)
	require.Equal(t, d, evidenceHome(t, gateflags.Settings{}), "stable")
	t.Run("other", func(t *testing.T) {
		require.NotEqual(t, d, evidenceHome(t, gateflags.Settings{}))
	})
	rel, err := filepath.Rel(roots().seen, d)
	require.NoError(t, err)
	require.False(t, filepath.IsLocal(rel), "never in the source tree: %s", d)
	require.Equal(t, filepath.Join("/ci/evidence", filepath.Base(d)), evidenceHome(t, gateflags.Settings{Evidence: "/ci/evidence"}))
}

// TestClaimGateDir: each failing gate gets a directory of its own, and
// only the newest keptGates stay.
func TestClaimGateDir(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "gate-notes.txt"), []byte("not ours"), 0o644))
	var got []string
	for range keptGates + 3 {
		d, err := claimGateDir(home)
		require.NoError(t, err)
		got = append(got, filepath.Base(d))
	}
	require.Equal(t, "gate-000001", got[0])
	require.Equal(t, "gate-000011", got[len(got)-1])
	ents, err := os.ReadDir(home)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.Equal(t, append(got[3:], "gate-notes.txt"), names, "the oldest are removed, nothing else")
}
