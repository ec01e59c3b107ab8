package cassettes

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/require"
)

// splitAll returns the frames f splits s into, or the error.
func splitAll(f framing, s string) ([]string, error) {
	var out []string
	off := 0
	for end, err := range f.ends(s) {
		if err != nil {
			return out, err
		}
		out = append(out, s[off:end])
		off = end
	}
	return out, nil
}

func TestSplitters(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    framing
		in   string
		want []string
	}{
		{"sse", framingSSE, "data: a\n\ndata: b\r\n\r\ndata: c", []string{"data: a\n\n", "data: b\r\n\r\n", "data: c"}},
		{"ndjson", framingNDJSON, "{\"a\":1}\n{\"b\":2}\n{\"c\"", []string{"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\""}},
		{"array", framingJSONArray, "[{\"a\":1}\n,\r\n{\"b\":2}\n]", []string{"[{\"a\":1}", "\n,\r\n{\"b\":2}", "\n]"}},
		{"array of scalars", framingJSONArray, " [1, \"x\" ,true,null ] \n", []string{" [1", ", \"x\"", " ,true", ",null", " ] \n"}},
		{"brackets and escapes in strings", framingJSONArray, `[{"a":"]}\"{["},["\\",{}]]`, []string{`[{"a":"]}\"{["}`, `,["\\",{}]`, `]`}},
		{"empty array", framingJSONArray, "[ ]", []string{"[ ]"}},
		{"no array", framingJSONArray, `{"a":[1,2]}`, []string{`{"a":[1,2]}`}},
		{"array cut short", framingJSONArray, `[{"a":1},{"b":"x`, []string{`[{"a":1}`, `,{"b":"x`}},
		{"stray closers", framingJSONArray, `[}},1]`, []string{`[}`, `}`, `,1`, `]`}},
		{"opaque", opaque, "anything\n\nat all", []string{"anything\n\nat all"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitAll(tt.f, tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFramingOf(t *testing.T) {
	for _, tt := range []struct {
		ct, body string
		want     framing
	}{
		{"text/event-stream; charset=utf-8", "data: x\n\n", framingSSE},
		{"application/x-ndjson", "{}\n{}\n", framingNDJSON},
		{"application/vnd.amazon.eventstream", "", framingEventStream},
		{"application/json; charset=UTF-8", "\r\n[{}]", framingJSONArray},
		{"application/json", "{\"a\":1}\n{\"b\":2}\n", framingNDJSON},
		{"application/json", "{\n  \"a\": {\"b\": 1}\n}\n", opaque},
		{"application/json", "{\"a\":1}\n", opaque},
		{"", "data: x\n\n", framingSSE},
		{"", "[1,2]", framingJSONArray},
		{"text/plain", "[1,2]", opaque},
	} {
		require.Equal(t, tt.want, framingOf(http.Header{"Content-Type": {tt.ct}}, tt.body), "%q %q", tt.ct, tt.body)
	}
	gz := http.Header{"Content-Type": {"application/x-ndjson"}, "Content-Encoding": {"gzip"}}
	require.Equal(t, opaque, framingOf(gz, "{}\n{}\n"), "compressed bytes are not the stream's")
}

// FuzzFrameSplitters: every splitter, on any input, partitions it into
// non-empty frames in order (or, for an AWS event stream only, stops at an
// error) without panicking; a valid JSON array splits into one frame per
// element plus the closing one, each holding that element; an event
// stream the AWS SDK's decoder reads whole splits into the frames it
// read, and one the splitter refuses, the SDK's decoder refuses too (but
// for frames past the bounds, which fuzzed inputs are too short to hold).
func FuzzFrameSplitters(f *testing.F) {
	var es bytes.Buffer
	var h eventstream.Headers
	h.Set(":event-type", eventstream.StringValue("contentBlockDelta"))
	for _, p := range []string{`{"delta":{"text":"Hi"}}`, `{}`} {
		require.NoError(f, eventstream.NewEncoder().Encode(&es, eventstream.Message{Headers: h, Payload: []byte(p)}))
	}
	for _, seed := range []string{
		"event: a\ndata: {}\n\n:c\r\rdata: x\r\n\r\n",
		"{\"a\":1}\n{\"b\":\"\\n\"}\n",
		"[{\"a\":\"]\\\"[\"}\n,\r\n{\"b\":[1,{\"c\":null}]}\n]",
		"[1,-2.5e3,\"x\",true,false,null,[],{}]",
		es.String(),
		es.String()[:es.Len()-3],
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := string(data)
		for _, fr := range []framing{opaque, framingSSE, framingNDJSON, framingJSONArray, framingEventStream} {
			frames, err := splitAll(fr, s)
			if err != nil && fr != framingEventStream {
				t.Fatalf("%v: %v", fr, err)
			}
			if err == nil && strings.Join(frames, "") != s {
				t.Fatalf("%v: frames %q do not make up %q", fr, frames, s)
			}
			for _, x := range frames {
				if x == "" {
					t.Fatalf("%v: an empty frame in %q", fr, frames)
				}
			}
		}
		checkArrayOracle(t, s)
		checkEventStreamOracle(t, s)
	})
}

// checkArrayOracle: when s is a valid JSON array, its frames are its
// elements (each after the "[" or "," and white space before it) and the
// closing bracket.
func checkArrayOracle(t *testing.T, s string) {
	var elems []json.RawMessage
	if !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "[") || json.Unmarshal([]byte(s), &elems) != nil {
		return
	}
	frames, _ := splitAll(framingJSONArray, s)
	if len(frames) != len(elems)+1 && !(len(elems) == 0 && len(frames) == 1) {
		t.Fatalf("%d frames %q for %d elements of %q", len(frames), frames, len(elems), s)
	}
	for i, e := range elems {
		got := strings.TrimLeft(frames[i], " \t\r\n")
		if i == 0 {
			got = strings.TrimLeft(strings.TrimPrefix(got, "["), " \t\r\n")
		} else {
			got = strings.TrimLeft(strings.TrimPrefix(got, ","), " \t\r\n")
		}
		if got != string(e) {
			t.Fatalf("frame %d is %q, element %d is %q", i, frames[i], i, e)
		}
	}
}

// checkEventStreamOracle compares the splitter with the AWS SDK's decoder.
func checkEventStreamOracle(t *testing.T, s string) {
	frames, err := splitAll(framingEventStream, s)
	r := strings.NewReader(s)
	dec := eventstream.NewDecoder()
	var sdkErr error
	read := 0
	for r.Len() > 0 {
		if _, sdkErr = dec.Decode(r, nil); sdkErr != nil {
			break
		}
		read++
	}
	switch {
	case err != nil && sdkErr == nil:
		t.Fatalf("the splitter refuses what the SDK reads: %v", err)
	case sdkErr == nil && len(frames) != read:
		t.Fatalf("%d frames split, %d read by the SDK", len(frames), read)
	}
}
