package cassettes_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/chunking"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// chunkRead is one Read of a replayed body: its bytes and when it
// returned, since the request was sent.
type chunkRead struct {
	b  string
	at time.Duration
}

// streamRequest is the request recordStream recorded.
const streamRequest = `{"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

// replayChunked replays the Messages request body from the cassette at
// path once, its response cut by plan, and returns every Read (a
// 4096-byte buffer each).
func replayChunked(t *testing.T, path, body string, plan chunking.Plan, cfg cassettes.Config) []chunkRead {
	t.Helper()
	c, err := cassettes.Open(path, cfg)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(chunking.With(context.Background(), plan), http.MethodPost, "https://api.anthropic.com/v1/messages",
		strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Client().Do(req)
	require.NoError(t, err)
	var reads []chunkRead
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			reads = append(reads, chunkRead{string(buf[:n]), time.Since(start)})
		}
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	require.NoError(t, resp.Body.Close())
	require.NoError(t, c.Close())
	return reads
}

// frameEnds are the offsets in the stream just past each frame.
func frameEnds() map[int]bool {
	ends := map[int]bool{}
	off := 0
	for _, f := range streamFrames {
		off += len(f)
		ends[off] = true
	}
	return ends
}

// cutsOf describes reads: how many ended inside a frame and how many
// held the ends of two or more frames.
func cutsOf(reads []chunkRead) (midFrame, joined int) {
	ends := frameEnds()
	off := 0
	for _, r := range reads {
		frames := 0
		for i := off + 1; i <= off+len(r.b); i++ {
			if ends[i] {
				frames++
			}
		}
		off += len(r.b)
		if !ends[off] {
			midFrame++
		}
		if frames > 1 {
			joined++
		}
	}
	return midFrame, joined
}

// TestChunkPlansKeepTheBytes: under every plan of runs 0 to 199 a
// replayed stream has the recorded bytes in the recorded order; as
// recorded, each Read is one frame; the other kinds cut as they say.
func TestChunkPlansKeepTheBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stream.yaml")
	recordStream(t, path, make([]time.Duration, len(streamFrames)))
	want := strings.Join(streamFrames, "")
	type tally struct{ bodies, midFrame, joined, reads int }
	seen := map[chunking.Kind]*tally{}
	for run := range 200 {
		plan := chunking.ForRun(run)
		reads := replayChunked(t, path, streamRequest, plan, cassettes.Config{Timing: cassettes.TimingOff})
		var got strings.Builder
		for _, r := range reads {
			got.WriteString(r.b)
		}
		require.Equal(t, want, got.String(), "run %d (%s)", run, plan)
		mid, joined := cutsOf(reads)
		tl := seen[plan.Kind]
		if tl == nil {
			tl = &tally{}
			seen[plan.Kind] = tl
		}
		tl.bodies++
		tl.midFrame += mid
		tl.joined += joined
		tl.reads += len(reads)
		switch plan.Kind {
		case chunking.AsRecorded:
			require.Len(t, reads, len(streamFrames), "run %d", run)
			for i, r := range reads {
				require.Equal(t, streamFrames[i], r.b, "run %d read %d", run, i)
			}
		case chunking.Bytes:
			require.Len(t, reads, len(want), "run %d", run)
		case chunking.Split:
			require.Positive(t, mid, "run %d", run)
			require.Zero(t, joined, "run %d", run)
		case chunking.Joined:
			require.Positive(t, joined, "run %d", run)
		}
	}
	require.Len(t, seen, 5, "every kind is planned within 200 runs")
	mixed := seen[chunking.Mixed]
	require.Positive(t, mixed.midFrame, "mixed plans split frames")
	require.Positive(t, mixed.joined, "mixed plans join frames")
	require.Equal(t, 40*len(streamFrames), seen[chunking.AsRecorded].reads)
}

// TestChunkPlansKeepTheTiming: inside a bubble, a cut Read never returns
// a byte of a frame before the frame's recorded offset, and never waits
// past the offset of the frame it starts in: a joined Read takes only the
// frames already due (the first three arrived together, the others 10 ms
// apart, and one after a 2 s stall).
func TestChunkPlansKeepTheTiming(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stream.yaml")
	offsets := offsetsFrom(40*time.Millisecond, 5, 2*time.Second)
	offsets[1], offsets[2] = offsets[0], offsets[0]
	recordStream(t, path, offsets)
	frameAt := func(off int) time.Duration { // offset of the frame holding byte off
		for i, f := range streamFrames {
			if off < len(f) {
				return offsets[i]
			}
			off -= len(f)
		}
		t.Fatalf("byte %d is past the stream", off)
		return 0
	}
	for run := range 10 {
		plan := chunking.ForRun(run)
		synctest.Test(t, func(t *testing.T) {
			reads := replayChunked(t, path, streamRequest, plan, cassettes.Config{})
			off := 0
			var prev time.Duration
			for i, r := range reads {
				last := frameAt(off + len(r.b) - 1)
				require.GreaterOrEqual(t, r.at, last, "run %d (%s) read %d returned bytes of a frame before it was due", run, plan, i)
				require.LessOrEqual(t, r.at, max(prev, frameAt(off)), "run %d (%s) read %d waited for a later frame", run, plan, i)
				off += len(r.b)
				prev = r.at
			}
			if plan.Kind == chunking.Joined {
				_, joined := cutsOf(reads)
				require.Positive(t, joined, "run %d: the frames that arrived together are joined", run)
			}
		})
	}
}

// TestChunkPlansCutJSONBodies: a body that is not an event stream, read
// whole as recorded, is cut by the other plans, with the same bytes.
func TestChunkPlansCutJSONBodies(t *testing.T) {
	const body = `{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"answer in one piece"}]}`
	path := filepath.Join(t.TempDir(), "json.yaml")
	rec, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{}).Transport()})
	require.NoError(t, err)
	resp, err := rec.Client().Post("https://api.anthropic.com/v1/messages", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	want, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, rec.Close())
	require.Less(t, len(want), 4096, "one Read can hold the whole body")
	for run := range 10 {
		plan := chunking.ForRun(run)
		reads := replayChunked(t, path, body, plan, cassettes.Config{})
		var got strings.Builder
		for _, r := range reads {
			got.WriteString(r.b)
		}
		require.Equal(t, string(want), got.String(), "run %d (%s)", run, plan)
		switch plan.Kind {
		case chunking.AsRecorded:
			require.Len(t, reads, 1, "run %d", run)
		case chunking.Split, chunking.Bytes:
			require.Greater(t, len(reads), len(want)/32, "run %d (%s)", run, plan)
		}
	}
}
