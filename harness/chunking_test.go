package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/fakellm"
)

const streamRequest = `{"model":"m","max_tokens":512,"stream":true,"messages":[{"role":"user","content":"stream an answer"}]}`

// recordAnthropicStream records one streamed Messages answer of the fake
// LLM into a new cassette and returns its path.
func recordAnthropicStream(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stream.yaml")
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{ChunkSize: 8}).Transport()})
	require.NoError(t, err)
	resp, err := c.Client().Post("https://api.anthropic.com/v1/messages", "application/json", strings.NewReader(streamRequest))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, c.Close())
	return path
}

// deltaText returns the text of a content_block_delta data line's JSON.
func deltaText(data string) (string, bool) {
	var ev struct {
		Delta struct {
			Text string `json:"text"`
		} `json:"delta"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(data)), &ev) != nil {
		return "", false
	}
	return ev.Delta.Text, true
}

// streamAccumulator is a pipeline that streams one answer and returns its
// text. With perRead it is the stream accumulator often written by hand:
// each Read is taken as one whole frame, and a frame that does not parse
// is skipped. Without, it reads lines through bufio, as the SDKs do.
func streamAccumulator(path string, perRead bool) Scenario {
	return func(ctx context.Context, run *Run) ([]byte, error) {
		hc, err := run.Client(path)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.anthropic.com/v1/messages", strings.NewReader(streamRequest))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var text strings.Builder
		if !perRead {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					d, _ := deltaText(data)
					text.WriteString(d)
				}
			}
			return []byte(text.String()), sc.Err()
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if _, data, ok := strings.Cut(string(buf[:n]), "data: "); ok {
				if d, ok := deltaText(data); ok {
					text.WriteString(d)
				}
			}
			if err == io.EOF {
				return []byte(text.String()), nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
}

// TestChunkingCatchesPerReadParser: a stream accumulator that takes each
// Read as one frame is right on every body delivered as recorded and is
// NONDETERMINISTIC under the chunking; the report lists each run's plan
// and names the chunking as the cause, after making the differing run
// again with and without it. No golden digest is involved.
func TestChunkingCatchesPerReadParser(t *testing.T) {
	t.Parallel()
	path := recordAnthropicStream(t)
	rep := Config{Iterations: 10, Floor: 10, Processes: -1}.check(t, "per-read-parser", streamAccumulator(path, true), false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Equal(t, []string{"as recorded", "split mid-frame", "frames joined", "single bytes", "mixed", "as recorded", "split mid-frame", "frames joined", "single bytes", "mixed"}, rep.Chunking)
	var base *gate.Class
	for i := range rep.Classes {
		if rep.Classes[i].FirstRun == 0 {
			base = &rep.Classes[i]
		}
	}
	require.NotNil(t, base)
	require.Equal(t, 2, base.Runs, "runs 0 and 5, delivered as recorded, agree: %s", rep)
	require.NotNil(t, rep.Causes, "%s", rep)
	require.Equal(t, []string{dimChunking}, rep.Causes.Depends, "%s", rep)
	require.NotEqual(t, "as recorded", rep.Causes.Chunking)
	text := rep.String()
	require.Contains(t, text, "stream chunking (replayed bodies cut into Reads")
	require.Contains(t, text, "  single bytes: run(s) 3, 8\n")
	require.Contains(t, text, "the outcome depends on: "+dimChunking)
	require.Contains(t, text, "never one Read per frame")
	t.Logf("%s", text)
}

// TestChunkingPassesLineReader: the same stream read line by line through
// bufio passes under every plan.
func TestChunkingPassesLineReader(t *testing.T) {
	t.Parallel()
	path := recordAnthropicStream(t)
	rep := Config{Iterations: 10, Floor: 10, Processes: -1}.check(t, "line-reader", streamAccumulator(path, false), false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Nil(t, rep.Causes)
	require.Len(t, rep.Chunking, 10)
}

// TestChunkingNotBlamedWrongly: a pipeline whose output differs in odd
// runs whatever the chunking is not traced to it: made again with its
// bodies delivered as recorded, the first odd run still differs.
func TestChunkingNotBlamedWrongly(t *testing.T) {
	t.Parallel()
	path := recordAnthropicStream(t)
	read := streamAccumulator(path, false)
	odd := func(ctx context.Context, run *Run) ([]byte, error) {
		out, err := read(ctx, run)
		if run.Index()%2 == 1 {
			out = append(out, " (odd)"...)
		}
		return out, err
	}
	rep := Config{Iterations: 6, Floor: 6, Processes: -1}.check(t, "odd-runs", odd, false)
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.NotNil(t, rep.Causes, "%s", rep)
	require.Empty(t, rep.Causes.Depends, "%s", rep)
	// Tried and not blamed, the chunking explains nothing: the report
	// leaves it out (report.json has it).
	text := rep.String()
	require.NotContains(t, text, "the outcome depends on")
	require.NotContains(t, text, "stream chunking")
}

// TestChunkingWithChildren: runs in child processes deliver every body as
// recorded, so they agree with run 0, and the chunking of the runs in the
// test process is still named as the cause.
func TestChunkingWithChildren(t *testing.T) {
	t.Parallel()
	path := recordAnthropicStream(t)
	rep := Config{Iterations: 8, Floor: 8, Processes: 2}.check(t, "per-read-parser-children", streamAccumulator(path, true), false)
	if inChild() {
		return
	}
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	for i, c := range rep.Classes {
		if c.FirstRun == 0 {
			require.Len(t, rep.ClassProcesses(i), 2, "%s", rep)
		}
	}
	for _, run := range []int{2, 5} { // childIterations(8, 2)
		require.Empty(t, rep.Chunking[run], "run %d was made in a child", run)
	}
	require.NotNil(t, rep.Causes, "%s", rep)
	require.Equal(t, []string{dimChunking}, rep.Causes.Depends, "%s", rep)
}
