package cassettes

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/dnaeon/go-vcr.v3/recorder"
)

// benchCassette writes a cassette of n LLM-like interactions, each with its
// own URL and a ~1 KiB JSON body, and returns its name (without .yaml).
func benchCassette(b *testing.B, n int) string {
	b.Helper()
	name := filepath.Join(b.TempDir(), fmt.Sprintf("bench%d", n))
	c := cassette.New(name)
	for i := range n {
		c.AddInteraction(&cassette.Interaction{
			Request: cassette.Request{
				Method:  "POST",
				URL:     benchURL(i),
				Body:    benchBody(i),
				Headers: http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}},
			},
			Response: cassette.Response{Code: 200, Status: "200 OK", Body: fmt.Sprintf(`{"i":%d}`, i),
				Headers: http.Header{"Content-Type": {"application/json"}}},
		})
	}
	require.NoError(b, c.Save())
	return name
}

func benchURL(i int) string { return fmt.Sprintf("https://api.anthropic.com/v1/messages?i=%d", i) }

func benchBody(i int) string {
	return fmt.Sprintf(`{"max_tokens":1024,"messages":[{"content":%q,"role":"user"}],"model":"claude-sonnet-4-5","temperature":0}`,
		fmt.Sprintf("request %d: ", i)+strings.Repeat("lorem ipsum ", 80))
}

// BenchmarkReplayLookup measures one replayed request (key, lookup and
// response) in a cassette of n interactions, cycling through all of them,
// for this package and for plain go-vcr with its default matcher (method
// and URL; every interaction has its own URL so the default matcher finds
// the right one). Both let interactions replay repeatedly (go-vcr's
// SetReplayableInteractions), so the cassette is opened once and the
// figure is the lookup, not the file parsing.
func BenchmarkReplayLookup(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		name := benchCassette(b, n)
		run := func(b *testing.B, rt http.RoundTripper) {
			reqs := make([]*http.Request, n)
			bodies := make([]string, n)
			for i := range reqs {
				req, err := http.NewRequest("POST", benchURL(i), nil)
				require.NoError(b, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Anthropic-Version", "2023-06-01")
				reqs[i], bodies[i] = req, benchBody(i)
			}
			i := 0
			for b.Loop() {
				req := reqs[i]
				req.Body = io.NopCloser(strings.NewReader(bodies[i]))
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if i++; i == n {
					i = 0
				}
			}
		}
		b.Run(fmt.Sprintf("cassettes/n=%d", n), func(b *testing.B) {
			c, err := Open(name+".yaml", Options{AllowUnused: true, replayable: true})
			require.NoError(b, err)
			run(b, c.Transport())
		})
		b.Run(fmt.Sprintf("govcr/n=%d", n), func(b *testing.B) {
			rec, err := recorder.NewWithOptions(&recorder.Options{CassetteName: name, Mode: recorder.ModeReplayOnly, SkipRequestLatency: true})
			require.NoError(b, err)
			rec.SetReplayableInteractions(true)
			run(b, rec)
		})
	}
}

// BenchmarkOpen measures opening a cassette of 100 interactions for replay
// (parse, validation, digest, index; no manifest) against go-vcr v3's
// cassette.Load of the same file.
func BenchmarkOpen(b *testing.B) {
	name := benchCassette(b, 100)
	b.Run("cassettes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := Open(name+".yaml", Options{AllowUnused: true})
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("govcr", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cassette.Load(name); err != nil {
				b.Fatal(err)
			}
		}
	})
}
