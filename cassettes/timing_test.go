package cassettes_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
)

// streamFrames are the frames of a streamed Messages answer.
var streamFrames = []string{
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" world\"}}\n\n",
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
}

// offsetsFrom is frame i at first + i*10ms, but for stalls: frame at
// index k waits stall more.
func offsetsFrom(first time.Duration, stallAt int, stall time.Duration) []time.Duration {
	out := make([]time.Duration, len(streamFrames))
	for i := range out {
		out[i] = first + time.Duration(i)*10*time.Millisecond
		if stallAt > 0 && i >= stallAt {
			out[i] += stall
		}
	}
	return out
}

// recordStream is recordFramed of the server-sent-events stream
// streamFrames.
func recordStream(t *testing.T, path string, offsets []time.Duration) {
	t.Helper()
	recordFramed(t, path, sseStream, offsets)
}

// pacedAPI answers with the frames a goroutine outside any synctest
// bubble sends in real time (the channels are made outside the bubble,
// which may only use them): a live API, seen from a recording inside a
// bubble.
type pacedAPI struct {
	streams <-chan chan string // one frame channel per request
}

func (a pacedAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	frames := <-a.streams
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, ContentLength: -1,
		Body: &chanBody{frames: frames}, Request: req}, nil
}

type chanBody struct {
	frames  <-chan string
	pending string
}

func (b *chanBody) Read(p []byte) (int, error) {
	if b.pending == "" {
		f, ok := <-b.frames
		if !ok {
			return 0, io.EOF
		}
		b.pending = f
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *chanBody) Close() error { return nil }

// TestStreamRecordedInBubbleKeepsRealTiming: a stream recorded inside a
// synctest bubble, whose time.Now is fake and does not move while the
// recording waits on the network, keeps the real cadence of its frames
// (sent 10 ms apart) and its real duration.
func TestStreamRecordedInBubbleKeepsRealTiming(t *testing.T) {
	const step = 10 * time.Millisecond
	streams := make(chan chan string)
	paced := make(chan struct{})
	sent := make([]time.Duration, len(streamFrames)) // when each frame was taken, since the request
	go func() {
		defer close(paced)
		frames := make(chan string)
		streams <- frames
		start := time.Now()
		for i, f := range streamFrames {
			time.Sleep(step)
			frames <- f
			sent[i] = time.Since(start)
		}
		close(frames)
	}()
	path := filepath.Join(t.TempDir(), "paced.yaml")
	synctest.Test(t, func(t *testing.T) {
		c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: pacedAPI{streams: streams}})
		require.NoError(t, err)
		resp, err := c.Client().Post("https://api.anthropic.com/v1/messages", "application/json", strings.NewReader(`{"stream":true}`))
		require.NoError(t, err)
		_, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, c.Close())
	})
	<-paced
	recs, err := cassettes.ReadRecorded(path)
	require.NoError(t, err)
	offs := recs[0].FrameOffsets()
	t.Logf("offsets recorded in a bubble: %v; frames taken at %v", offs, sent)
	require.Len(t, offs, len(streamFrames))
	for i, d := range offs {
		// Frame i is sent no sooner than (i+1) steps after the request,
		// and recorded within a few ms of when the recording took it
		// (offsets are whole milliseconds).
		require.GreaterOrEqual(t, d, time.Duration(i+1)*step-time.Millisecond, "frame %d: %v", i, offs)
		require.InDelta(t, sent[i].Seconds(), d.Seconds(), 0.005, "frame %d: %v, taken at %v", i, offs, sent)
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "duration: 0s", "the real duration is kept")
	require.NotContains(t, string(raw), "Measured-Duration", "the carrier header is never saved")
}

var (
	errTTFT  = errors.New("no first token within the time-to-first-token timeout")
	errStall = errors.New("the stream stalled")
)

// streamText is the pipeline under test: it streams a completion and
// gives up when the first frame takes longer than ttft, or any later
// frame longer than stall after the one before (0: no stall limit).
func streamText(ctx context.Context, client *http.Client, ttft, stall time.Duration) (string, error) {
	return streamFramed(ctx, client, sseStream, ttft, stall)
}

func orCause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return err
}

// TestStreamTimingOutsideABubble: outside a bubble replay delivers every
// frame at once unless Config.Timing asks for wall-time pacing.
func TestStreamTimingOutsideABubble(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	recordStream(t, path, offsetsFrom(300*time.Millisecond, 0, 0))
	for _, tt := range []struct {
		timing  cassettes.Timing
		ttft    time.Duration
		wantErr error
		atLeast time.Duration
	}{
		{cassettes.TimingAuto, 50 * time.Millisecond, nil, 0},
		{cassettes.TimingOff, 50 * time.Millisecond, nil, 0},
		{cassettes.TimingOn, 2 * time.Second, nil, 360 * time.Millisecond},
		{cassettes.TimingOn, 50 * time.Millisecond, errTTFT, 50 * time.Millisecond},
	} {
		cs, err := cassettes.Open(path, cassettes.Config{Timing: tt.timing})
		require.NoError(t, err)
		start := time.Now()
		text, err := streamText(context.Background(), cs.Client(), tt.ttft, 0)
		took := time.Since(start)
		require.ErrorIs(t, err, tt.wantErr)
		require.GreaterOrEqual(t, took, tt.atLeast)
		if tt.wantErr == nil {
			require.Equal(t, "Hello world", text)
			if tt.atLeast == 0 {
				require.Less(t, took, 250*time.Millisecond, "no pacing: faster than the first recorded frame")
			}
		}
		require.NoError(t, cs.Close())
	}
}

// TestBadFrameOffsets: a cassette whose offsets header does not fit its
// stream is refused with the line, as any malformed cassette.
func TestBadFrameOffsets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	recordStream(t, path, offsetsFrom(time.Second, 0, 0))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, tt := range []struct{ old, new, says string }{
		{"1000,1010", "1000", "offsets for"},
		{"1000,1010", "1010,1000", "before the one before it"},
		{"1000,1010", "x,1010", "not a number of milliseconds"},
	} {
		bad := strings.Replace(string(raw), tt.old, tt.new, 1)
		require.NotEqual(t, string(raw), bad)
		p := filepath.Join(dir, "bad.yaml")
		require.NoError(t, os.WriteFile(p, []byte(bad), 0o644))
		_, err := cassettes.Open(p, cassettes.Config{})
		require.ErrorIs(t, err, cassettes.ErrInvalidCassette)
		require.ErrorContains(t, err, tt.says)
		require.ErrorContains(t, err, "bad.yaml:")
	}
}

// setDuration sets the recorded duration of every interaction of the
// cassette at path.
func setDuration(t *testing.T, path string, d time.Duration) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`(?m)^(\s+duration: )\S+$`)
	require.True(t, re.Match(raw))
	require.NoError(t, os.WriteFile(path, re.ReplaceAll(raw, []byte("${1}"+d.String())), 0o644))
}

// TestLatencyOption: Config.Latency times a replayed response from its
// recorded duration: a stream's frames arrive at their offsets scaled by
// Latency(d)/d, any other response after Latency(d); a wait cancelled by
// the request's context gives the interaction back.
func TestLatencyOption(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "stream.yaml")
	recordStream(t, stream, offsetsFrom(time.Second, 0, 0)) // last frame at 1.06 s
	setDuration(t, stream, 1060*time.Millisecond)
	double := func(d time.Duration) time.Duration { return 2 * d }
	synctest.Test(t, func(t *testing.T) {
		cs, err := cassettes.Open(stream, cassettes.Config{Latency: double})
		require.NoError(t, err)
		start := time.Now()
		text, err := streamText(t.Context(), cs.Client(), 3*time.Second, 0)
		require.NoError(t, err)
		require.Equal(t, "Hello world", text)
		require.Equal(t, 2120*time.Millisecond, time.Since(start), "the frames at twice their offsets")
		require.NoError(t, cs.Close())
	})

	plain := filepath.Join(dir, "plain.yaml")
	recordPlain(t, plain, 12*time.Second)
	synctest.Test(t, func(t *testing.T) {
		cs, err := cassettes.Open(plain, cassettes.Config{Latency: double})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", "https://api.example.com/v1/answer", strings.NewReader(`{}`))
		_, err = cs.Client().Do(req)
		require.ErrorIs(t, err, context.DeadlineExceeded, "cancelled while the response was due")
		start := time.Now()
		resp, err := cs.Client().Post("https://api.example.com/v1/answer", "application/json", strings.NewReader(`{}`))
		require.NoError(t, err, "the interaction was given back")
		resp.Body.Close()
		require.Equal(t, 24*time.Second, time.Since(start))
		require.NoError(t, cs.Close())
	})
}

// recordPlain writes a cassette of one JSON answer from jsonAPI to a
// POST of {} to https://api.example.com/v1/answer, whose recorded
// duration is then set to d.
func recordPlain(t *testing.T, path string, d time.Duration) {
	t.Helper()
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: jsonAPI{}})
	require.NoError(t, err)
	resp, err := c.Client().Post("https://api.example.com/v1/answer", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, c.Close())
	setDuration(t, path, d)
}

// jsonAPI answers every request with a small JSON body.
type jsonAPI struct{}

func (jsonAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(`{"text":"hi"}`)), Request: req}, nil
}

// TestDeadlineTiesWithLatency: when the request's deadline falls at the
// very instant a replayed response is due (a response after its latency,
// a stream's first or a later frame at its offset), the deadline wins, in
// each of 100 bubbles: the request ends with context.DeadlineExceeded at
// that instant and nothing due then is delivered.
func TestDeadlineTiesWithLatency(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.yaml")
	recordPlain(t, plain, 12*time.Second)
	stream := filepath.Join(dir, "stream.yaml")
	recordStream(t, stream, offsetsFrom(time.Second, 0, 0))
	asRecorded := func(d time.Duration) time.Duration { return d }
	const streamRequest = `{"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

	cases := []struct {
		name, path, url, body string
		latency               func(time.Duration) time.Duration
		deadline              time.Duration
		want                  string
	}{
		{"a response due at the deadline", plain, "https://api.example.com/v1/answer", `{}`, asRecorded, 12 * time.Second,
			"context deadline exceeded after 12s, 0 bytes"},
		{"the first frame due at the deadline", stream, "https://api.anthropic.com/v1/messages", streamRequest, nil, time.Second,
			"context deadline exceeded after 1s, 0 bytes"},
		{"the third frame due at the deadline", stream, "https://api.anthropic.com/v1/messages", streamRequest, nil, 1020 * time.Millisecond,
			fmt.Sprintf("context deadline exceeded after 1.02s, %d bytes", len(streamFrames[0])+len(streamFrames[1]))},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			outcomes := map[string]int{}
			for range 100 {
				synctest.Test(t, func(t *testing.T) {
					cs, err := cassettes.Open(tt.path, cassettes.Config{Latency: tt.latency})
					require.NoError(t, err)
					ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
					defer cancel()
					start := time.Now()
					req, err := http.NewRequestWithContext(ctx, "POST", tt.url, strings.NewReader(tt.body))
					require.NoError(t, err)
					req.Header.Set("Content-Type", "application/json")
					var body []byte
					resp, err := cs.Client().Do(req)
					if err == nil {
						body, err = io.ReadAll(resp.Body)
						resp.Body.Close()
					}
					outcome := "delivered"
					if errors.Is(err, context.DeadlineExceeded) {
						outcome = context.DeadlineExceeded.Error()
					} else if err != nil {
						outcome = err.Error()
					}
					outcomes[fmt.Sprintf("%s after %v, %d bytes", outcome, time.Since(start), len(body))]++
					require.NoError(t, cs.Close())
				})
			}
			require.Equal(t, map[string]int{tt.want: 100}, outcomes)
		})
	}
}
