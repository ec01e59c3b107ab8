package cassettes

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/dnaeon/go-vcr.v3/recorder"
	"gopkg.in/yaml.v3"
)

// benchCassette writes a cassette of n LLM-like interactions, each with its
// own URL and a ~1 KiB JSON body, and returns its name (without .yaml).
func benchCassette(b testing.TB, n int) string {
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
				req.ContentLength = int64(len(bodies[i])) // as SDKs send it
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
			c, err := Open(name+".yaml", Config{AllowUnused: true, replayable: true})
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

// BenchmarkOpen measures opening a cassette of 100 interactions for
// replay against go-vcr v3's cassette.Load of the same file. "cassettes"
// opens it as each run does, its content already parsed in this process
// (read, hash, manifest check, per-Open state); "cold" empties the
// package's caches first (read, parse, validation, digest, index, manifest,
// credential headers); "cold-unvouched" opens it without a manifest, so
// the secret ruleset runs too.
func BenchmarkOpen(b *testing.B) {
	name := benchCassette(b, 100)
	writeManifestFor(b, filepath.Dir(name), filepath.Base(name)+".yaml")
	bare := filepath.Join(b.TempDir(), "bare.yaml")
	raw, err := os.ReadFile(name + ".yaml")
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(bare, raw, 0o644))
	open := func(b *testing.B, path string, cold bool) {
		b.ReportAllocs()
		for b.Loop() {
			if cold {
				emptyCaches()
			}
			c, err := Open(path, Config{AllowUnused: true})
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	}
	b.Run("cassettes", func(b *testing.B) { open(b, name+".yaml", false) })
	b.Run("cold", func(b *testing.B) { open(b, name+".yaml", true) })
	b.Run("cold-unvouched", func(b *testing.B) { open(b, bare, true) })
	b.Run("govcr", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cassette.Load(name); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// emptyCaches forgets every parsed cassette, scan and manifest.
func emptyCaches() {
	parsedCache.Lock()
	parsedCache.m = nil
	parsedCache.Unlock()
	scanCache.Lock()
	scanCache.m = nil
	scanCache.Unlock()
	manifest.ResetCache()
}

// largeCassette writes a cassette of n interactions like benchCassette's,
// in the layout go-vcr writes, without marshalling n interactions: one is
// marshalled by go-vcr and its text repeated with each one's index.
func largeCassette(b testing.TB, n int) string {
	b.Helper()
	const idx = "IDXIDX"
	c := cassette.New("")
	c.AddInteraction(&cassette.Interaction{
		Request: cassette.Request{Method: "POST", URL: benchURL(0) + idx, Body: benchBody(0) + idx,
			Headers: http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}}},
		Response: cassette.Response{Code: 200, Status: "200 OK", Body: `{"i":"` + idx + `"}`,
			Headers: http.Header{"Content-Type": {"application/json"}}},
	})
	one, err := yaml.Marshal(c)
	require.NoError(b, err)
	head, item, ok := strings.Cut(string(one), "interactions:\n")
	require.True(b, ok)
	item = strings.Replace(item, "- id: 0\n", "- id: "+idx+"\n", 1)
	path := filepath.Join(b.TempDir(), fmt.Sprintf("large%d.yaml", n))
	f, err := os.Create(path)
	require.NoError(b, err)
	w := bufio.NewWriter(f)
	_, err = w.WriteString("---\n" + head + "interactions:\n")
	require.NoError(b, err)
	for i := range n {
		_, err = w.WriteString(strings.ReplaceAll(item, idx, strconv.Itoa(i)))
		require.NoError(b, err)
	}
	require.NoError(b, w.Flush())
	require.NoError(b, f.Close())
	return path
}

// benchLarge is the largest cassette BenchmarkOpenLarge opens.
var benchLarge = flag.Int("bench.large", 10000, "the interactions of the largest cassette BenchmarkOpenLarge opens")

// BenchmarkOpenLarge measures opening a cassette of n interactions (1000,
// 10000 and -bench.large; about 1.9 KB each) for the first time in a
// process (the package's caches emptied), vouched for by a manifest
// ("vouched": read, parse, validation, digest, index, manifest,
// credential headers) and not ("unvouched": the secret ruleset too). Its
// time and memory must grow linearly with n. cpu-ns/op is the process's
// CPU time per open (Unix), steadier than the wall time on a busy
// machine.
func BenchmarkOpenLarge(b *testing.B) {
	sizes := []int{1000, 10000}
	if *benchLarge > 10000 {
		sizes = append(sizes, *benchLarge)
	}
	for _, n := range sizes {
		path := largeCassette(b, n)
		dir := filepath.Dir(path)
		bare := filepath.Join(b.TempDir(), filepath.Base(path))
		raw, err := os.ReadFile(path)
		require.NoError(b, err)
		require.NoError(b, os.WriteFile(bare, raw, 0o644))
		writeManifestFor(b, dir, filepath.Base(path))
		for _, c := range []struct{ name, path string }{{"vouched", path}, {"unvouched", bare}} {
			b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				cpu := processCPU()
				for b.Loop() {
					emptyCaches()
					cs, err := Open(c.path, Config{AllowUnused: true})
					if err != nil {
						b.Fatal(err)
					}
					cs.Close()
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
