package cassettes_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// Read what a committed cassette recorded, without replaying it.
func ExampleReadRecorded() {
	recs, err := cassettes.ReadRecorded(filepath.Join("testdata", cassettes.FileName("npm-lodash", "happy")))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		fmt.Println(r.Method, r.URL, r.Status, r.RequestHeaders.Get("X-Api-Key"))
	}
	// Output: POST https://api.anthropic.com/v1/messages 200 REDACTED
}

// The frames of a recorded stream, one by one.
func ExampleRecorded_Frames() {
	dir, _ := os.MkdirTemp("", "cassettes-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stream.yaml")
	c, _ := cassettes.Open(path, cassettes.Options{Mode: cassettes.Record, RealTransport: fakellm.New(fakellm.Config{}).Transport()})
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
	for f := range recs[0].Frames() {
		fmt.Println(strings.SplitN(f, "\n", 2)[0])
	}
	// Output:
	// event: message_start
	// event: content_block_start
	// event: ping
	// event: content_block_delta
	// event: content_block_stop
	// event: message_delta
	// event: message_stop
}
