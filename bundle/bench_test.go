package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/eventrec"
	"github.com/codegenie/codegenie/internal/tape"
	"github.com/codegenie/codegenie/internal/tapetest"
)

const benchEvents = 200_000

var (
	benchOnce sync.Once
	benchDir  string
	benchFile string
	benchErr  error
)

// benchBundles writes one bundle of one run of benchEvents events with
// 256-byte payloads, in both forms, shared by the benchmarks of this file.
func benchBundles(b *testing.B) (string, string) {
	b.Helper()
	benchOnce.Do(func() {
		root, err := os.MkdirTemp("", "bundle-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir, benchFile = filepath.Join(root, "b.bundle"), filepath.Join(root, "b"+FileExt)
		bd := single(syntheticTape(b, benchEvents, 256))
		benchErr = errors.Join(Config{}.Write(context.Background(), benchDir, bd), Config{}.WriteFile(context.Background(), benchFile, bd))
	})
	require.NoError(b, benchErr)
	return benchDir, benchFile
}

func TestMain(m *testing.M) {
	if p := os.Getenv(killWriterEnv); p != "" {
		killWriter(p)
	}
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(filepath.Dir(benchDir))
	}
	os.Exit(code)
}

func reportRate(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkVerify is full validation (file digests, hash chain, payload
// digests, ordering, required fields) of a bundle of 256-byte payloads.
// Run it on one core: go test -run '^$' -bench Verify -cpu 1 ./bundle
func BenchmarkVerify(b *testing.B) {
	dir, file := benchBundles(b)
	for _, tc := range []struct{ name, path string }{{"dir", dir}, {"file", file}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				rep, err := Config{}.Verify(context.Background(), tc.path)
				if err != nil || rep.Events != benchEvents {
					b.Fatal(err)
				}
			}
			reportRate(b, benchEvents)
		})
	}
}

// plainStream streams the directory bundle's events.log to fn with no
// check at all: records are parsed (eventrec.Parse), blobs read once
// and shared like the Reader shares them, inline payloads copied into an
// arena like Next copies them. It is the baseline validation is measured
// against. fn owns each event's payload.
func plainStream(path string, fn func(events.Event) error) error {
	f, err := os.Open(filepath.Join(path, eventsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	l := newLogReader(f, logChunk)
	l.hash = nil
	if err := l.header(); err != nil {
		return err
	}
	var r eventrec.Record
	var a arena
	var kinds eventrec.Interner
	cache := map[events.Digest][]byte{}
	for {
		stored, _, err := l.frame()
		if err == io.EOF {
			if _, _, err := l.trailer(); err != nil {
				return err
			}
			if l.atEnd() == nil {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		if _, err := eventrec.Parse(stored, &r, recordLimits); err != nil {
			return err
		}
		e := tape.Event(&r, &kinds)
		if len(e.Payload) == 0 && e.PayloadDigest != emptyDigest { // a blob
			b, ok := cache[e.PayloadDigest]
			if !ok {
				if b, err = os.ReadFile(filepath.Join(path, blobName(e.PayloadDigest))); err != nil {
					return err
				}
				cache[e.PayloadDigest] = b
			}
			e.Payload = b
		} else {
			e.Payload = a.copy(e.Payload)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// BenchmarkLoad compares Load (full validation, every event kept in
// memory) with plainStream collecting the same events with no check.
func BenchmarkLoad(b *testing.B) {
	dir, _ := benchBundles(b)
	for _, tc := range []struct {
		name string
		load func() (int, error)
	}{
		{"plain", func() (int, error) {
			evs := make([]events.Event, 0, benchEvents)
			err := plainStream(dir, func(e events.Event) error { evs = append(evs, e); return nil })
			return len(evs), err
		}},
		{"validated", func() (int, error) {
			bd, err := Config{}.Load(context.Background(), dir)
			if err != nil {
				return 0, err
			}
			return len(bd.Runs[0].Events), nil
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if n, err := tc.load(); err != nil || n != benchEvents {
					b.Fatal(n, err)
				}
			}
			reportRate(b, benchEvents)
		})
	}
}

// TreeSize is the total size of the regular files under dir (exported for
// the external tests: tier_bench_test.go).
func TreeSize(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	}))
	return n
}

// BenchmarkCompression writes synthetic realistic runs (shaped like a
// pipeline's, cycling over 10 advisories) as a bundle of that many runs
// and reports "ratio", the raw runs (their canonical records and outputs)
// over the single file, and "dir-ratio", the directory form (blobs shared
// by content) over the single file, i.e. what zstd alone gains.
// BenchmarkCompressionTier uses the fallback tier's real runs.
func BenchmarkCompression(b *testing.B) {
	for _, runs := range []int{1, 50, 1000} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			tapes := make([][]events.Event, runs)
			for i := range tapes {
				tapes[i] = realisticRunOf(b, i%tapetest.Scenarios, i)
			}
			bd := manyRuns(tapes...)
			raw := RawSize(bd)
			var file []byte
			var err error
			for b.Loop() {
				if file, _, err = encodeBundleErr(bd); err != nil {
					b.Fatal(err)
				}
			}
			dir, _ := writeBoth(b, bd)
			b.ReportMetric(float64(raw)/float64(len(file)), "ratio")
			b.ReportMetric(float64(TreeSize(b, dir))/float64(len(file)), "dir-ratio")
			b.ReportMetric(float64(len(file)), "file-bytes")
		})
	}
}

// RawSize is the size of a bundle's runs as they would be kept without a
// bundle: each event's canonical record (tape.AppendRecord) and each
// run's output (exported for the external tests: tier_bench_test.go).
func RawSize(b *Bundle) int {
	n := 0
	for _, r := range b.Runs {
		n += len(r.Output)
		for _, e := range r.Events {
			n += len(tape.AppendRecord(nil, e))
		}
	}
	return n
}

// samplePeakHeap samples HeapInuse every 5 ms until stop is called, which
// returns the peak.
func samplePeakHeap() func() uint64 {
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapInuse)
	}
	go func() {
		defer close(finished)
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				sample()
				return
			case <-tk.C:
				sample()
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak }
}

// BenchmarkHashFloor is the hashing Verify cannot avoid, with no I/O and no
// parsing: per event, the payload digest and the chain hash over the header
// record (eventrec.Chainer). Verify's events/s is bounded by this.
func BenchmarkHashFloor(b *testing.B) {
	evs := syntheticTape(b, 4096, 256)
	headers := make([][]byte, len(evs))
	for i, e := range evs {
		headers[i] = tape.AppendHeader(nil, e)
	}
	for b.Loop() {
		var c eventrec.Chainer
		for i, h := range headers {
			if events.Sum(evs[i].Payload) != evs[i].PayloadDigest {
				b.Fatal("digest")
			}
			c.AddRecord(h)
		}
	}
	reportRate(b, len(evs))
}
