package cassettes_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// Read what a committed cassette recorded, without replaying it.
func ExampleReadRecorded() {
	recs, err := cassettes.ReadRecorded(filepath.Join("testdata", "npm-lodash.happy.yaml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		fmt.Println(r.Method, r.URL, r.Status, r.RequestHeaders.Get("Authorization"))
	}
	// Output: POST https://api.anthropic.com/v1/messages 200 REDACTED
}

// The framing of a recorded stream, and its frames one by one.
func ExampleRecorded_Frames() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stream.yaml")
	c, _ := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{}).Transport()})
	resp, err := c.Client().Post("https://api.anthropic.com/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.Close()

	recs, _ := cassettes.ReadRecorded(path)
	fmt.Println(recs[0].Framing())
	for f := range recs[0].Frames() {
		fmt.Println(strings.SplitN(f, "\n", 2)[0])
	}
	// Output:
	// sse
	// event: message_start
	// event: content_block_start
	// event: ping
	// event: content_block_delta
	// event: content_block_stop
	// event: message_delta
	// event: message_stop
}

// slowFake streams two frames, the first after 20ms.
type slowFake struct{}

func (slowFake) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body) // as a server reads the request
	time.Sleep(20 * time.Millisecond)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Request: req,
		Body: io.NopCloser(strings.NewReader("data: {\"n\":1}\n\ndata: {\"n\":2}\n\n"))}, nil
}

// When each frame of a recorded stream arrived, and a replay paced by it
// in wall time (inside a testing/synctest bubble it is paced on the fake
// clock by default).
func ExampleRecorded_FrameOffsets() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "slow.yaml")
	c, _ := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: slowFake{}})
	resp, err := c.Client().Post("https://api.example.com/v1/messages", "application/json", strings.NewReader(`{}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.Close()

	recs, _ := cassettes.ReadRecorded(path)
	offs := recs[0].FrameOffsets()
	fmt.Println(len(offs), offs[0] >= 20*time.Millisecond)

	replay, _ := cassettes.Open(path, cassettes.Config{Timing: cassettes.TimingOn})
	start := time.Now()
	resp, err = replay.Client().Post("https://api.example.com/v1/messages", "application/json", strings.NewReader(`{}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Println(time.Since(start) >= offs[1], resp.Header.Get(cassettes.FrameOffsetsHeader) == "")
	fmt.Println(replay.Close())
	// Output:
	// 2 true
	// true true
	// <nil>
}
