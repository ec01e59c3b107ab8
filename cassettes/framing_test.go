package cassettes_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/codegenie/codegenie/cassettes"
)

// framed is a stream of one framing, as its API sends it: seven frames,
// the text deltas "Hello" and " world" in frames 2 and 3, and how a client
// of that API reads it (calling each with every JSON document as it is
// read).
type framed struct {
	name, framing string // the test's name, Recorded.Framing
	contentType   string
	url           string
	request       string
	frames        []string
	docs          func(r io.Reader, each func(doc []byte) error) error
}

// ollamaLine is one line of Ollama's /api/chat NDJSON stream.
func ollamaLine(text string, done bool) string {
	return fmt.Sprintf(`{"model":"llama3.2","created_at":"2026-11-27T00:00:00Z","message":{"role":"assistant","content":%q},"done":%t}`+"\n", text, done)
}

// geminiElement is one element of Gemini's streamed JSON array; its
// modelVersion holds quotes, brackets and braces inside a string.
func geminiElement(text string) string {
	return fmt.Sprintf("{\n  \"candidates\": [{\"content\": {\"parts\": [{\"text\": %q}], \"role\": \"model\"}}],\n  \"modelVersion\": \"gemini-2.0-flash \\\"[x]{y}\\\"\"\n}", text)
}

// bedrockFrame is one frame of Bedrock ConverseStream's event stream,
// encoded by the AWS SDK's own encoder.
func bedrockFrame(t testing.TB, eventType, payload string) string {
	var h eventstream.Headers
	h.Set(":event-type", eventstream.StringValue(eventType))
	h.Set(":content-type", eventstream.StringValue("application/json"))
	h.Set(":message-type", eventstream.StringValue("event"))
	var b bytes.Buffer
	require.NoError(t, eventstream.NewEncoder().Encode(&b, eventstream.Message{Headers: h, Payload: []byte(payload)}))
	return b.String()
}

// lineDocs reads a stream line by line, as clients of server-sent events
// and of NDJSON do: each line that starts with prefix holds a document
// after it.
func lineDocs(prefix string) func(io.Reader, func([]byte) error) error {
	return func(r io.Reader, each func([]byte) error) error {
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if doc, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok && doc != "" {
				if err := each([]byte(doc)); err != nil {
					return err
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
}

// deltaText is the text a document of any of the framings' APIs carries:
// Anthropic's and Bedrock's delta.text, Ollama's message.content or (of
// /api/generate) response, Gemini's candidates' parts' text, or the
// content and tool-call arguments of OpenAI chat choices' deltas.
func deltaText(doc []byte) (string, error) {
	var d struct {
		Delta      struct{ Text string }
		Message    struct{ Content any }
		Response   string
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
		Choices []struct {
			Delta struct {
				Content   string
				ToolCalls []struct {
					Function struct{ Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return "", err
	}
	text, _ := d.Message.Content.(string)
	text = d.Delta.Text + text + d.Response
	for _, c := range d.Candidates {
		for _, p := range c.Content.Parts {
			text += p.Text
		}
	}
	for _, c := range d.Choices {
		text += c.Delta.Content
		for _, tc := range c.Delta.ToolCalls {
			text += tc.Function.Arguments
		}
	}
	return text, nil
}

// eventStreamDocs reads an AWS event stream as the AWS SDK does, each
// message's payload a document; with chunks, the payloads are
// InvokeModelWithResponseStream's {"bytes": ...} and the document is the
// bytes, decoded from base64.
func eventStreamDocs(chunks bool) func(io.Reader, func([]byte) error) error {
	return func(r io.Reader, each func([]byte) error) error {
		dec := eventstream.NewDecoder()
		for {
			m, err := dec.Decode(r, nil)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			doc := m.Payload
			if chunks {
				var c struct{ Bytes []byte }
				if err := json.Unmarshal(m.Payload, &c); err != nil {
					return err
				}
				doc = c.Bytes
			}
			if err := each(doc); err != nil {
				return err
			}
		}
	}
}

// invokeChunk is one frame of Bedrock InvokeModelWithResponseStream's
// event stream for Claude: a chunk event whose bytes are an Anthropic
// stream event.
func invokeChunk(t testing.TB, event string) string {
	b, err := json.Marshal(map[string][]byte{"bytes": []byte(event)})
	require.NoError(t, err)
	return bedrockFrame(t, "chunk", string(b))
}

// chatChunk is one frame of an OpenAI chat completion stream whose
// choice 0 has delta.
func chatChunk(delta string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"gpt-4.1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
}

// sseStream is Anthropic's stream streamFrames.
var sseStream = framed{
	name: "sse", framing: "sse", contentType: "text/event-stream",
	url:     "https://api.anthropic.com/v1/messages",
	request: `{"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
	frames:  streamFrames,
	docs:    lineDocs("data: "),
}

func framings(t testing.TB) []framed {
	delta := func(s string) string {
		return fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":%q}}`, s)
	}
	return []framed{
		sseStream,
		{
			name: "ndjson", framing: "ndjson", contentType: "application/x-ndjson",
			url:     "http://localhost:11434/api/chat",
			request: `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`,
			frames: []string{ollamaLine("", false), ollamaLine("", false), ollamaLine("Hello", false), ollamaLine(" world", false),
				ollamaLine("", false), ollamaLine("", false), ollamaLine("", true)},
			docs: lineDocs(""),
		},
		{
			name: "json array", framing: "json-array", contentType: "application/json; charset=UTF-8",
			url:     "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent",
			request: `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			frames: []string{"[" + geminiElement(""), "\n,\r\n" + geminiElement(""), "\n,\r\n" + geminiElement("Hello"),
				"\n,\r\n" + geminiElement(" world"), "\n,\r\n" + geminiElement(""), "\n,\r\n" + geminiElement(""), "\n]"},
			docs: func(r io.Reader, each func([]byte) error) error {
				dec := json.NewDecoder(r)
				if _, err := dec.Token(); err != nil {
					return err
				}
				for dec.More() {
					var el json.RawMessage
					if err := dec.Decode(&el); err != nil {
						return err
					}
					if err := each(el); err != nil {
						return err
					}
				}
				_, err := dec.Token()
				return err
			},
		},
		{
			name: "eventstream", framing: "eventstream", contentType: "application/vnd.amazon.eventstream",
			url:     "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream",
			request: `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`,
			frames: []string{bedrockFrame(t, "messageStart", `{"role":"assistant"}`), bedrockFrame(t, "contentBlockDelta", delta("")),
				bedrockFrame(t, "contentBlockDelta", delta("Hello")), bedrockFrame(t, "contentBlockDelta", delta(" world")),
				bedrockFrame(t, "contentBlockStop", `{"contentBlockIndex":0}`), bedrockFrame(t, "messageStop", `{"stopReason":"end_turn"}`),
				bedrockFrame(t, "metadata", `{"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5},"metrics":{"latencyMs":100}}`)},
			docs: eventStreamDocs(false),
		},
		{
			name: "eventstream chunks", framing: "eventstream", contentType: "application/vnd.amazon.eventstream",
			url:     "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream",
			request: `{"anthropic_version":"bedrock-2023-05-31","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`,
			frames: []string{
				invokeChunk(t, `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":3,"output_tokens":1}}}`),
				invokeChunk(t, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				invokeChunk(t, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`),
				invokeChunk(t, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}}`),
				invokeChunk(t, `{"type":"content_block_stop","index":0}`),
				invokeChunk(t, `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`),
				invokeChunk(t, `{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":3,"outputTokenCount":2,"invocationLatency":100,"firstByteLatency":90}}`),
			},
			docs: eventStreamDocs(true),
		},
		{
			name: "ndjson generate", framing: "ndjson", contentType: "application/x-ndjson",
			url:     "http://localhost:11434/api/generate",
			request: `{"model":"llama3.2","prompt":"hi"}`,
			frames: []string{generateLine("", false), generateLine("", false), generateLine("Hello", false), generateLine(" world", false),
				generateLine("", false), generateLine("", false), generateLine("", true)},
			docs: lineDocs(""),
		},
		{
			name: "sse chat tool call", framing: "sse", contentType: "text/event-stream",
			url:     "https://api.openai.com/v1/chat/completions",
			request: `{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
			frames: []string{
				chatChunk(`{"role":"assistant","content":null}`),
				chatChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}`),
				chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"Hello"}}]}`),
				chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":" world"}}]}`),
				`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
				`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"gpt-4.1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n",
				"data: [DONE]\n\n",
			},
			docs: func(r io.Reader, each func([]byte) error) error {
				return lineDocs("data: ")(r, func(doc []byte) error {
					if string(doc) == "[DONE]" {
						return nil
					}
					return each(doc)
				})
			},
		},
	}
}

// generateLine is one line of Ollama's /api/generate NDJSON stream.
func generateLine(text string, done bool) string {
	return fmt.Sprintf(`{"model":"llama3.2","created_at":"2026-11-27T00:00:00Z","response":%q,"done":%t}`+"\n", text, done)
}

// framesAPI answers every request with the frames of s, one per Read,
// frame i sent step*(i+1) after the request (in the caller's time).
type framesAPI struct {
	s    framed
	step time.Duration
}

func (a framesAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	frames := make(chan string)
	go func() {
		defer close(frames)
		for _, f := range a.s.frames {
			time.Sleep(a.step)
			select {
			case frames <- f:
			case <-req.Context().Done():
				return
			}
		}
	}()
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {a.s.contentType}}, ContentLength: -1,
		Body: &chanBody{frames: frames}, Request: req}, nil
}

// recordOnce records at path one request of api's stream, its answer
// read whole.
func recordOnce(t *testing.T, path string, api framesAPI) {
	t.Helper()
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: api})
	require.NoError(t, err)
	resp, err := c.Client().Post(api.s.url, "application/json", strings.NewReader(api.s.request))
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, c.Close())
}

// recordFramed writes a cassette of one request answered with s, every
// frame at once, its offsets header then set to offsets, so replay tests
// choose their timing exactly at no wall-time cost. (Recording's own
// measure, in real time, is what TestFramingRecordsArrival and
// TestStreamRecordedInBubbleKeepsRealTiming test.)
func recordFramed(t *testing.T, path string, s framed, offsets []time.Duration) {
	t.Helper()
	recordOnce(t, path, framesAPI{s: s})
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	ms := make([]string, len(offsets))
	for i, d := range offsets {
		ms[i] = fmt.Sprint(d.Milliseconds())
	}
	re := regexp.MustCompile(`(` + cassettes.FrameOffsetsHeader + `:\n\s+- )[0-9,]+`)
	require.True(t, re.Match(raw), "the %s recording has an offsets header", s.name)
	raw = re.ReplaceAll(raw, []byte("${1}"+strings.Join(ms, ",")))
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}

// streamFramed is streamText for any framing: it streams s and gives up
// when the first message takes longer than ttft, or any later one longer
// than stall after the one before (0: no stall limit).
func streamFramed(ctx context.Context, client *http.Client, s framed, ttft, stall time.Duration) (string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	first := time.AfterFunc(ttft, func() { cancel(errTTFT) })
	defer first.Stop()
	var stalled *time.Timer
	if stall > 0 {
		stalled = time.AfterFunc(time.Hour, func() { cancel(errStall) })
		stalled.Stop()
		defer stalled.Stop()
	}
	req, err := http.NewRequestWithContext(ctx, "POST", s.url, strings.NewReader(s.request))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", orCause(ctx, err)
	}
	defer resp.Body.Close()
	var text strings.Builder
	err = s.docs(resp.Body, func(doc []byte) error {
		t, err := deltaText(doc)
		if err != nil {
			return err
		}
		first.Stop()
		if stalled != nil {
			stalled.Reset(stall)
		}
		text.WriteString(t)
		return nil
	})
	if err != nil {
		return text.String(), orCause(ctx, err)
	}
	return text.String(), nil
}

// TestFramingTimingInSynctest: for every framing, with a 2 s
// time-to-first-token timeout, a stream whose first frame arrived at 1 s
// passes and one whose first frame arrived at 3 s times out; a stall
// between frames times out; each verdict is the same in 100 runs of 100,
// each in its own bubble, in far less wall time than the fake time that
// passed.
func TestFramingTimingInSynctest(t *testing.T) {
	cases := []struct {
		name    string
		offsets []time.Duration
		stall   time.Duration
		want    string
	}{
		{"first frame at 1s", offsetsFrom(time.Second, 0, 0), 0, `"Hello world" <nil> after 1.06s`},
		{"first frame at 3s", offsetsFrom(3*time.Second, 0, 0), 0, `"" ` + errTTFT.Error() + ` after 2s`},
		{"a 5s stall after the first delta", offsetsFrom(time.Second, 3, 5*time.Second), time.Second, `"Hello" ` + errStall.Error() + ` after 2.02s`},
	}
	for _, s := range framings(t) {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			wall := time.Now()
			var fake time.Duration
			for i, c := range cases {
				path := filepath.Join(dir, fmt.Sprintf("s%d.yaml", i))
				recordFramed(t, path, s, c.offsets)
				recs, err := cassettes.ReadRecorded(path)
				require.NoError(t, err)
				require.Equal(t, c.offsets, recs[0].FrameOffsets(), "one offset per frame")
				verdicts := map[string]int{}
				for range 100 {
					synctest.Test(t, func(t *testing.T) {
						cs, err := cassettes.Open(path, cassettes.Config{})
						require.NoError(t, err)
						defer cs.Close()
						start := time.Now()
						text, err := streamFramed(t.Context(), cs.Client(), s, 2*time.Second, c.stall)
						elapsed := time.Since(start)
						fake += elapsed
						verdicts[fmt.Sprintf("%q %v after %v", text, err, elapsed)]++
					})
				}
				require.Equal(t, map[string]int{c.want: 100}, verdicts, c.name)
			}
			took := time.Since(wall)
			t.Logf("300 replays: %v of fake time in %v of wall time", fake, took)
			require.Greater(t, fake, 500*time.Second)
			require.Less(t, took, 10*time.Second)
		})
	}
}

// TestFramingCancelledMidStream: for every framing, cancelling the request
// while a paced frame is due ends the read at once and gives the
// interaction back, so a retry replays the whole stream, paced from its
// own start.
func TestFramingCancelledMidStream(t *testing.T) {
	for _, s := range framings(t) {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			recordFramed(t, path, s, offsetsFrom(time.Second, 3, 10*time.Second))
			synctest.Test(t, func(t *testing.T) {
				cs, err := cassettes.Open(path, cassettes.Config{})
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(t.Context())
				start := time.Now()
				time.AfterFunc(1500*time.Millisecond, cancel)
				text, err := streamFramed(ctx, cs.Client(), s, 2*time.Second, 0)
				require.ErrorIs(t, err, context.Canceled)
				require.Equal(t, "Hello", text)
				require.Equal(t, 1500*time.Millisecond, time.Since(start))

				start = time.Now()
				text, err = streamFramed(t.Context(), cs.Client(), s, 2*time.Second, 0)
				require.NoError(t, err)
				require.Equal(t, "Hello world", text)
				require.Equal(t, 11060*time.Millisecond, time.Since(start), "the retry is paced from its own start")
				require.NoError(t, cs.Close())
			})
		})
	}
}

// TestFramingServesFramesExactly: for every framing, replay serves the
// recorded bytes exactly, one frame per Read at most and every frame
// whole across the Reads it takes, even with a buffer smaller than a
// frame; the event stream decodes through the AWS SDK's decoder, whose
// CRC checks pass.
func TestFramingServesFramesExactly(t *testing.T) {
	for _, s := range framings(t) {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			recordFramed(t, path, s, offsetsFrom(0, 0, 0))
			for _, size := range []int{1 << 16, 7} {
				cs, err := cassettes.Open(path, cassettes.Config{})
				require.NoError(t, err)
				resp, err := cs.Client().Post(s.url, "application/json", strings.NewReader(s.request))
				require.NoError(t, err)
				var got []string // bytes of each Read
				buf := make([]byte, size)
				for {
					n, err := resp.Body.Read(buf)
					if n > 0 {
						got = append(got, string(buf[:n]))
					}
					if err == io.EOF {
						break
					}
					require.NoError(t, err)
				}
				require.NoError(t, resp.Body.Close())
				require.NoError(t, cs.Close())
				require.Equal(t, strings.Join(s.frames, ""), strings.Join(got, ""), "byte-exact")
				// Regroup the Reads into frames: each Read stays in one frame.
				var regrouped []string
				cur := ""
				for _, g := range got {
					cur += g
					require.LessOrEqual(t, len(cur), len(s.frames[len(regrouped)]), "a Read crossed the end of frame %d", len(regrouped))
					if cur == s.frames[len(regrouped)] {
						regrouped, cur = append(regrouped, cur), ""
					}
				}
				require.Equal(t, s.frames, regrouped)
			}
			cs, err := cassettes.Open(path, cassettes.Config{})
			require.NoError(t, err)
			text, err := streamFramed(context.Background(), cs.Client(), s, time.Minute, 0)
			require.NoError(t, err, "decoded as the API's client decodes it")
			require.Equal(t, "Hello world", text)
			require.NoError(t, cs.Close())
		})
	}
}

// TestFramingRecordsArrival: recording notes when each frame of every
// framing arrived, in real time: frames sent 10 ms apart are recorded
// 10 ms apart or more, one offset per frame; Recorded names the framing
// and yields the frames.
func TestFramingRecordsArrival(t *testing.T) {
	const step = 10 * time.Millisecond
	for _, s := range framings(t) {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			recordOnce(t, path, framesAPI{s: s, step: step})
			recs, err := cassettes.ReadRecorded(path)
			require.NoError(t, err)
			require.Equal(t, s.framing, recs[0].Framing())
			require.Equal(t, s.frames, slices.Collect(recs[0].Frames()), "the frames replay serves")
			offs := recs[0].FrameOffsets()
			require.Len(t, offs, len(s.frames), "%v", offs)
			for i, d := range offs {
				require.GreaterOrEqual(t, d, time.Duration(i+1)*step-time.Millisecond, "frame %d: %v", i, offs)
			}
		})
	}
}

// TestBadEventStream: an AWS event stream with a bad CRC, or a frame
// whose length runs past the body, is refused at Open with the frame and
// the reason; recording one fails and saves nothing.
func TestBadEventStream(t *testing.T) {
	s := framings(t)[3]
	require.Equal(t, "eventstream", s.name)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	recordFramed(t, good, s, offsetsFrom(time.Second, 0, 0))
	whole := strings.Join(s.frames, "")
	second := len(s.frames[0])
	flip := func(at int) string {
		b := []byte(whole)
		b[at] ^= 0x01
		return string(b)
	}
	for _, tt := range []struct {
		name, body, says string
	}{
		{"payload byte", flip(second + len(s.frames[1]) - 6), "frame 1 (at byte " + fmt.Sprint(second) + ") of the AWS event stream: the message CRC"},
		{"prelude CRC", flip(second + 9), "frame 1 (at byte " + fmt.Sprint(second) + ") of the AWS event stream: the prelude's CRC"},
		{"cut short", whole[:len(whole)-5], "frame 6"},
		{"trailing bytes", whole + "abc", "frame 7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := cassette.Load(strings.TrimSuffix(good, ".yaml"))
			require.NoError(t, err)
			cs.Interactions[0].Response.Body = tt.body
			cs.Interactions[0].Response.Headers.Del(cassettes.FrameOffsetsHeader)
			cs.Name = filepath.Join(dir, "bad")
			cs.File = cs.Name + ".yaml"
			require.NoError(t, cs.Save())
			_, err = cassettes.Open(cs.Name+".yaml", cassettes.Config{})
			require.ErrorIs(t, err, cassettes.ErrInvalidCassette)
			require.ErrorContains(t, err, tt.says)
			require.ErrorContains(t, err, "bad.yaml:")
		})
	}

	path := filepath.Join(dir, "recorded.yaml")
	bad := s
	bad.frames = []string{s.frames[0], s.frames[1][:len(s.frames[1])-1] + "x"}
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: framesAPI{s: bad}})
	require.NoError(t, err)
	_, err = c.Client().Post(s.url, "application/json", strings.NewReader(s.request))
	require.ErrorContains(t, err, "of the AWS event stream: the message CRC")
	require.Error(t, c.Close(), "nothing is saved")
	require.NoFileExists(t, path)
}

// TestRecordedFramesOfNoStream: a response that is no stream has no
// framing and no frames; an event stream yields its frames up to a bad
// one.
func TestRecordedFramesOfNoStream(t *testing.T) {
	body := cassettes.Recorded{ResponseHeaders: http.Header{"Content-Type": {"application/json"}}, ResponseBody: `{"a":1}`}
	require.Equal(t, "", body.Framing())
	require.Empty(t, slices.Collect(body.Frames()))

	s := framings(t)[3]
	require.Equal(t, "eventstream", s.name)
	bad := cassettes.Recorded{ResponseHeaders: http.Header{"Content-Type": {s.contentType}},
		ResponseBody: s.frames[0] + s.frames[1][:len(s.frames[1])-1] + "x" + s.frames[2]}
	require.Equal(t, "eventstream", bad.Framing())
	require.Equal(t, s.frames[:1], slices.Collect(bad.Frames()))
}

// TestEmptyStreamRecords: a stream answered with no bytes at all has no
// frames, so its recording has no offsets and opens.
func TestEmptyStreamRecords(t *testing.T) {
	for _, s := range framings(t) {
		t.Run(s.name, func(t *testing.T) {
			s.frames = nil
			path := filepath.Join(t.TempDir(), "empty.yaml")
			recordOnce(t, path, framesAPI{s: s})
			cs, err := cassettes.Open(path, cassettes.Config{})
			require.NoError(t, err)
			resp, err := cs.Client().Post(s.url, "application/json", strings.NewReader(s.request))
			require.NoError(t, err)
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Empty(t, b)
			require.NoError(t, resp.Body.Close())
			require.NoError(t, cs.Close())
		})
	}
}
