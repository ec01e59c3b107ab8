package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// reviewSystem is the system prompt every request of the fan-out
// pipeline carries.
const reviewSystem = "You review Go code. Be concise."

// fanoutRequest is request i of n of the fan-out pipeline: the file it
// asks about, streamed for odd i, with the given system prompt, and
// extra members merged into its body.
func fanoutRequest(i int, system string, extra map[string]any) []byte {
	body := map[string]any{
		"model": "claude-x", "max_tokens": 256, "system": system, "stream": i%2 == 1,
		"messages": []any{map[string]any{"role": "user", "content": fmt.Sprintf("review file%d.go", i)}},
	}
	for k, v := range extra {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return b
}

// recordFanout records the n requests of the fan-out pipeline, each
// answered by the fake Anthropic API (odd ones streamed), and returns the
// cassette's path.
func recordFanout(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("fanout%d.yaml", n))
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{ChunkSize: 8}).Transport()})
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, postMessages(t.Context(), c.Client(), fanoutRequest(i, reviewSystem, nil)))
	}
	require.NoError(t, c.Close())
	return path
}

// postMessages sends body to the Messages API and reads the answer whole.
func postMessages(ctx context.Context, hc *http.Client, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.anthropic.com/v1/messages", strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// fanout is a pipeline that sends its n requests at once and stops at
// the first error (errgroup), as a reviewer that asks about several files
// concurrently does; request(run, i) is request i's body in run run.
func fanout(path string, n int, request func(run *Run, i int) []byte) Scenario {
	return func(ctx context.Context, run *Run) ([]byte, error) {
		hc, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		g, ctx := errgroup.WithContext(ctx)
		for i := range n {
			g.Go(func() error { return postMessages(ctx, hc, request(run, i)) })
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		return []byte("reviewed"), nil
	}
}

// TestConcurrentMissIsOneChange: a deliberate change that every run
// misses the same way is BROKEN with one re-record command, however many
// requests are in flight and whichever missed first (errgroup cancels the
// others as soon as one fails, so each run misses another subset of
// them): the runs are grouped by what their misses mean. The change in
// every request (the system prompt) or in one (one file's question), for
// fan-outs of 2, 3 and 8 requests, half of them streamed.
func TestConcurrentMissIsOneChange(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 8} {
		path := recordFanout(t, n)
		for _, tt := range []struct {
			name    string
			request func(run *Run, i int) []byte
			field   string
		}{
			{"prompt changed in every request", func(_ *Run, i int) []byte {
				return fanoutRequest(i, "You review Go code. Be brief.", nil)
			}, `body ["system"]: "…concise." != "…brief."`},
			{"one request changed", func(_ *Run, i int) []byte {
				if i == n-1 {
					return fanoutRequest(i, reviewSystem, map[string]any{"max_tokens": 512})
				}
				return fanoutRequest(i, reviewSystem, nil)
			}, `body ["max_tokens"]: 256 != 512`},
		} {
			t.Run(fmt.Sprintf("%d requests, %s", n, tt.name), func(t *testing.T) {
				cfg := Config{Iterations: 50, Processes: -1, ArtifactDir: t.TempDir()}
				rep := cfg.check(t, "fanout", fanout(path, n, tt.request), false)
				require.Equal(t, gate.Broken, rep.Verdict, "%s", rep)
				require.Len(t, rep.Classes, 1, "%s", rep)
				require.Equal(t, ErrorKindCassetteMiss, rep.Classes[0].ErrorKind)
				require.Contains(t, rep.Classes[0].Message, tt.field)
				text := rep.String()
				require.Equal(t, 1, strings.Count(text, "-cassettes.record="), "one re-record command:\n%s", text)
				require.Contains(t, text, "re-record it: "+rep.ReRecordCommand)
			})
		}
	}
}

// TestConcurrentMissVaries: misses that differ between runs stay
// NONDETERMINISTIC, with no re-record command: a request field that
// differs from run to run (a timestamp), or a different set of changed
// fields.
func TestConcurrentMissVaries(t *testing.T) {
	t.Parallel()
	const n = 3
	path := recordFanout(t, n)
	tests := []struct {
		name    string
		request func(run *Run, i int) []byte
		classes int
	}{
		{"a field differs per run", func(_ *Run, i int) []byte {
			return fanoutRequest(i, reviewSystem, map[string]any{"metadata": map[string]any{"user_id": time.Now().Format(time.RFC3339Nano)}})
		}, 20},
		{"another field changed in some runs", func(run *Run, i int) []byte {
			if run.Index()%2 == 1 {
				return fanoutRequest(i, reviewSystem, map[string]any{"max_tokens": 512})
			}
			return fanoutRequest(i, "You review Go code. Be brief.", nil)
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Iterations: 20, Processes: -1, ArtifactDir: t.TempDir()}
			rep := cfg.check(t, "fanout-varies", fanout(path, n, tt.request), false)
			require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
			require.Len(t, rep.Classes, tt.classes, "%s", rep)
			require.Empty(t, rep.ReRecordCommand)
			requireNoReRecordAdvice(t, rep.String())
		})
	}
}

// TestBundleDiffShowsTheMisses: bundle diff of the two runs a
// NONDETERMINISTIC gate compares, which missed with different requests,
// shows what the gate showed of each: the request and how it differs
// from its recording, field by field.
func TestBundleDiffShowsTheMisses(t *testing.T) {
	t.Parallel()
	path := recordFanout(t, 2)
	s := fanout(path, 2, func(run *Run, i int) []byte {
		return fanoutRequest(i, reviewSystem, map[string]any{"metadata": map[string]any{"user_id": fmt.Sprintf("run %d", run.Index())}})
	})
	rep := Config{Iterations: 4, Floor: 4, Processes: -1, ArtifactDir: t.TempDir()}.check(t, "fanout-diff", s, false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	d := rep.Divergence
	evPath := rep.Evidence
	require.NotEmpty(t, evPath)
	dr, err := bundle.Config{}.Diff(t.Context(), bundle.RunRef{Path: evPath, Run: fmt.Sprintf("run-%03d", d.RunA)}, bundle.RunRef{Path: evPath, Run: fmt.Sprintf("run-%03d", d.RunB)})
	require.NoError(t, err)
	var sb strings.Builder
	require.NoError(t, dr.Text(&sb))
	text := rep.String()
	for _, c := range []gate.Class{rep.Classes[d.ClassA-1], rep.Classes[d.ClassB-1]} {
		for l := range strings.SplitSeq(c.Message, "\n") {
			require.Contains(t, text, l)
			require.Contains(t, sb.String(), l, "bundle diff shows the gate's line")
		}
		require.Contains(t, c.Message, `body ["metadata"]: (missing) != {"user_id":"run `)
	}
}

// requireNoReRecordAdvice fails t when text advises recording a cassette
// again, or holds the placeholder an earlier report printed instead of a
// command.
func requireNoReRecordAdvice(t testing.TB, text string) {
	t.Helper()
	for _, bad := range []string{"-cassettes.record", "re-record it", "re-record with", "record again", "recording again", "the re-record command the gate's report gives"} {
		require.NotContains(t, text, bad, "a nondeterminism never suggests recording again:\n%s", text)
	}
}
