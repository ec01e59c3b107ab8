package harness

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
)

// timedHello asks "hello" through the cassette at path and returns the
// answer and how long it took.
func timedHello(ctx context.Context, run *Run, path string) (string, time.Duration, error) {
	client, err := run.Client(path)
	if err != nil {
		return "", 0, err
	}
	start := time.Now()
	text, err := complete(ctx, client, "hello")
	return text, time.Since(start), err
}

// TestMeasuredLatencyIsCaught: inside the bubbles every replayed response
// takes a run-dependent amount of fake time, so a pipeline that puts the
// measured latency of its LLM call into its output is caught in the test
// process.
func TestMeasuredLatencyIsCaught(t *testing.T) {
	t.Parallel()
	cassette := recordCassette(t, t.TempDir(), "latency", "hello")
	s := func(ctx context.Context, run *Run) ([]byte, error) {
		text, took, err := timedHello(ctx, run, cassette)
		return fmt.Appendf(nil, "%s (answered in %v)", text, took), err
	}
	rep := Config{Iterations: 20, Processes: -1}.check(t, "latency-in-output", s, false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Len(t, rep.Classes, 20, "every run measured another latency")
	require.NotNil(t, rep.Divergence.Output)
	require.Contains(t, rep.Divergence.Output.ExcerptA, "answered in ")
	require.Empty(t, rep.ReRecordCommand)

	// The same pipeline without the measurement passes.
	rep = Config{Iterations: 20, Processes: -1}.check(t, "latency-not-in-output", func(ctx context.Context, run *Run) ([]byte, error) {
		client, err := run.Client(cassette)
		if err != nil {
			return nil, err
		}
		text, err := complete(ctx, client, "hello")
		return []byte(text), err
	}, false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
}

// TestLatencyNamedAsCause: an elapsed-time budget around a call decides
// what reaches the output, so runs split by the latency replayed for
// them; a differing run made again with the latencies of run 0 agrees
// with run 0, and the report names the replayed latency as the cause.
func TestLatencyNamedAsCause(t *testing.T) {
	cassette := recordCassette(t, t.TempDir(), "budget", "hello")
	s := func(ctx context.Context, run *Run) ([]byte, error) {
		text, took, err := timedHello(ctx, run, cassette)
		if err != nil {
			return nil, err
		}
		if took > 500*time.Millisecond {
			return []byte("no time left for the tool call; " + text), nil
		}
		return []byte("called the tool; " + text), nil
	}
	rep := Config{Iterations: 20, Processes: -1}.check(t, "latency-budget", s, false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.NotNil(t, rep.Causes, "%s", rep)
	require.True(t, rep.Causes.Latency, "%s", rep)
	require.Equal(t, []string{dimLatency}, rep.Causes.Depends)
	text := rep.String()
	head, _, _ := strings.Cut(text, "\n\n")
	require.Contains(t, head, "the outcome depends on replayed latency", "the cause is on the first screen")
	requireNoReRecordAdvice(t, text)

	// Outside a bubble nothing is replayed with latency, and nothing is
	// blamed on it.
	rep, err := Config{Iterations: 20, ArtifactDir: t.TempDir()}.Iterate(t.Context(), "no-latency", func(ctx context.Context, run *Run) ([]byte, error) {
		return []byte(fmt.Sprint(run.Index() % 2)), nil
	})
	require.ErrorIs(t, err, ErrNondeterministic)
	require.True(t, rep.Causes == nil || !rep.Causes.Latency, "%s", rep)
}

func TestDefaultLatency(t *testing.T) {
	t.Parallel()
	seen := map[time.Duration]bool{}
	for run := range 50 {
		d := defaultLatency(run, 0, 0)
		require.GreaterOrEqual(t, d, time.Millisecond)
		require.Less(t, d, 2*time.Second)
		seen[d] = true
	}
	require.Len(t, seen, 50, "every run of a default gate gets another latency")
	require.NotEqual(t, defaultLatency(3, 0, 0), defaultLatency(3, 1, 0), "and every call of a run")

	// Around a recorded duration: from half of it to just under twice it.
	const rec = 12 * time.Second
	lo, hi := time.Hour, time.Duration(0)
	for run := range 1000 {
		d := defaultLatency(run, run%3, rec)
		lo, hi = min(lo, d), max(hi, d)
	}
	require.GreaterOrEqual(t, lo, rec/2)
	require.Less(t, lo, rec/2+100*time.Millisecond)
	require.Less(t, hi, 2*rec)
	require.Greater(t, hi, 2*rec-100*time.Millisecond)
}

// streamFrames is a short event stream.
var streamFrames = []string{
	"event: delta\ndata: {\"text\":\"Hel\"}\n\n",
	"event: delta\ndata: {\"text\":\"lo \"}\n\n",
	"event: delta\ndata: {\"text\":\"wor\"}\n\n",
	"event: delta\ndata: {\"text\":\"ld\"}\n\n",
	"event: done\ndata: {}\n\n",
}

var errFirstToken = errors.New("no first token within the time-to-first-token timeout")

// readStream sends one streamed request and returns the frames' text,
// failing with errFirstToken when no byte arrives within ttft (0: no
// limit).
func readStream(ctx context.Context, client *http.Client, ttft time.Duration) (string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if ttft > 0 {
		first := time.AfterFunc(ttft, func() { cancel(errFirstToken) })
		defer first.Stop()
		ctx = context.WithValue(ctx, firstTokenTimer{}, first)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", "https://api.example.com/v1/stream", strings.NewReader(`{"stream":true}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", causeOr(ctx, err)
	}
	defer resp.Body.Close()
	var text strings.Builder
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if t, ok := ctx.Value(firstTokenTimer{}).(*time.Timer); ok && line != "" {
			t.Stop()
		}
		text.WriteString(line)
		if err == io.EOF {
			return text.String(), nil
		}
		if err != nil {
			return text.String(), causeOr(ctx, err)
		}
	}
}

type firstTokenTimer struct{}

func causeOr(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return err
}

// TestStreamRecordedThroughCheck: a stream recorded by run 0 of a gate
// under the record switch, inside its synctest bubble, keeps the real
// cadence of a server that sends its first frame after 100 ms and then one
// every 10 ms; replayed in the bubbles, a time-to-first-token timeout of
// 40 ms, shorter than the recorded first frame, fails every run.
func TestStreamRecordedThroughCheck(t *testing.T) {
	const first, step = 100 * time.Millisecond, 10 * time.Millisecond
	var mu sync.Mutex
	var sent []time.Duration // when the server flushed each frame, since the request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		mu.Lock()
		sent = sent[:0]
		mu.Unlock()
		for i, f := range streamFrames {
			wait := step
			if i == 0 {
				wait = first
			}
			time.Sleep(wait)
			_, _ = io.WriteString(w, f)
			w.(http.Flusher).Flush()
			mu.Lock()
			sent = append(sent, time.Since(start))
			mu.Unlock()
		}
	}))
	defer srv.Close()
	redirect, err := cassettes.Redirect("https://api.example.com", srv.URL, nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "stream.yaml")
	scenario := func(ttft time.Duration) Scenario {
		return func(ctx context.Context, run *Run) ([]byte, error) {
			c, err := run.Client(path)
			if err != nil {
				return nil, err
			}
			text, err := readStream(ctx, c, ttft)
			return []byte(text), err
		}
	}
	if !inChild() {
		require.NoError(t, flag.Set(cassettes.RecordFlag, `stream\.yaml$`))
	}
	cfg := Config{Iterations: 20, Processes: -1, Cassette: cassettes.Config{RealTransport: redirect}}
	rep := cfg.check(t, "record-stream", scenario(0), false)
	require.NoError(t, flag.Set(cassettes.RecordFlag, ""))
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Equal(t, []string{path}, rep.Recorded)

	recs, err := cassettes.ReadRecorded(path)
	require.NoError(t, err)
	offs := recs[0].FrameOffsets()
	mu.Lock()
	t.Logf("recorded offsets %v; the server flushed at %v", offs, sent)
	require.Len(t, offs, len(sent))
	// The recording's clock starts when the request is sent, the
	// server's when it arrives: the first frame is no sooner, and every
	// later one follows it as the server's did, within a few ms.
	require.GreaterOrEqual(t, offs[0], sent[0]-time.Millisecond)
	for i, d := range offs {
		require.GreaterOrEqual(t, d, first+time.Duration(i)*step-time.Millisecond, "frame %d: %v", i, offs)
		require.InDelta(t, (sent[i] - sent[0]).Seconds(), (d - offs[0]).Seconds(), 0.005, "frame %d: %v, flushed at %v", i, offs, sent)
	}
	mu.Unlock()

	rep = Config{Iterations: 20, Processes: -1}.check(t, "first-token-timeout", scenario(40*time.Millisecond), false)
	require.Equal(t, gate.Broken, rep.Verdict, "%s", rep)
	require.Equal(t, 20, rep.Classes[0].Runs, "every run timed out")
	require.Contains(t, rep.Classes[0].Message, errFirstToken.Error())
}

// recordTook records one call per prompt, each as if the API had taken
// took (the cassette's duration fields are set to it), and returns the
// cassette's path.
func recordTook(t *testing.T, name string, took time.Duration, prompts ...string) string {
	t.Helper()
	path := recordCassette(t, t.TempDir(), name, prompts...)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`(?m)^(\s+duration: )\S+$`)
	require.Len(t, re.FindAll(raw, -1), len(prompts))
	raw = re.ReplaceAll(raw, []byte("${1}"+took.String()))
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	return path
}

// TestLatencyFromRecording: an agent loop that stops after 30 s of
// elapsed time, over three calls recorded at 12 s each, hits its cap in
// some runs (as production could), so the gate does not pass; over calls
// recorded at 1 s it never does, and the gate passes.
func TestLatencyFromRecording(t *testing.T) {
	t.Parallel()
	prompts := []string{"plan", "act", "check"}
	loop := func(path string) Scenario {
		return func(ctx context.Context, run *Run) ([]byte, error) {
			client, err := run.Client(path)
			if err != nil {
				return nil, err
			}
			start := time.Now()
			var out []string
			for _, p := range prompts {
				if time.Since(start) > 30*time.Second {
					out = append(out, "stopped: 30 s elapsed")
					break
				}
				text, err := complete(ctx, client, p)
				if err != nil {
					return nil, err
				}
				out = append(out, text)
			}
			return []byte(strings.Join(out, "\n")), nil
		}
	}
	cfg := Config{Iterations: 20, Processes: -1, Cassette: cassettes.Config{AllowUnused: true}}
	slow := recordTook(t, "slow", 12*time.Second, prompts...)
	rep := cfg.check(t, "cap-slow", loop(slow), false)
	require.Contains(t, []gate.Verdict{gate.Nondeterministic, gate.Broken}, rep.Verdict, "%s", rep)
	if rep.Verdict == gate.Nondeterministic {
		require.NotNil(t, rep.Divergence.Output, "%s", rep)
		require.Contains(t, rep.Divergence.Output.ExcerptA+rep.Divergence.Output.ExcerptB, "stopped: 30 s elapsed")
	}
	t.Logf("calls of 12 s: %s", rep.Summary())

	fast := recordTook(t, "fast", time.Second, prompts...)
	rep = cfg.check(t, "cap-fast", loop(fast), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
}
