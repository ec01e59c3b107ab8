package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

const benchEvents = 200_000

var (
	benchOnce sync.Once
	benchDir  string
	benchFile string
	benchErr  error
)

// benchBundles writes one bundle of benchEvents 256-byte-payload events in
// both forms, shared by the benchmarks of this file.
func benchBundles(b *testing.B) (string, string) {
	b.Helper()
	benchOnce.Do(func() {
		root, err := os.MkdirTemp("", "replay-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir, benchFile = filepath.Join(root, "b.bundle"), filepath.Join(root, "b"+FileExt)
		bd := &Bundle{Metadata: testMeta(), Events: syntheticTape(b, benchEvents, 256)}
		benchErr = errors.Join(Write(context.Background(), benchDir, bd), WriteFile(context.Background(), benchFile, bd))
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
// Run it on one core: go test -run '^$' -bench Verify -cpu 1 ./replay
func BenchmarkVerify(b *testing.B) {
	dir, file := benchBundles(b)
	for _, tc := range []struct{ name, path string }{{"dir", dir}, {"file", file}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				rep, err := Verify(context.Background(), tc.path)
				if err != nil || rep.Events != benchEvents {
					b.Fatal(err)
				}
			}
			reportRate(b, benchEvents)
		})
	}
}

// plainLoad reads the directory bundle's events.log without any check: the
// baseline that BenchmarkLoad measures validation against. It decodes with
// events.DecodeRecord, what a reader without validation would use;
// plainScanLoad decodes with the validator's own parser instead (scanRecord
// and rec.event, which Load uses), the faster and so the stricter baseline.
// Both size the slice for n events up front, as Load does from the
// manifest's count.
func plainLoad(path string, n int) ([]events.Event, error) { return plainLoadWith(path, n, false) }

func plainScanLoad(path string, n int) ([]events.Event, error) {
	return plainLoadWith(path, n, true)
}

func plainLoadWith(path string, n int, scan bool) ([]events.Event, error) {
	evs := make([]events.Event, 0, n)
	if err := plainStream(path, scan, func(e events.Event) error { evs = append(evs, e); return nil }); err != nil {
		return nil, err
	}
	return evs, nil
}

// plainStream streams the directory bundle's events.log to fn with no
// check (blobs are read, not hashed, and kept like the Reader keeps them). scan selects the validator's parser
// (scanRecord and rec.event) instead of events.DecodeRecord. fn owns each
// event's payload.
func plainStream(path string, scan bool, fn func(events.Event) error) error {
	f, err := os.Open(filepath.Join(path, EventsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	l := newLogReader(f, logChunk)
	l.hash = nil
	if err := l.header(); err != nil {
		return err
	}
	var r rec
	var a arena
	cache, cached := map[events.Digest][]byte{}, 0
	for {
		stored, _, err := l.frame()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var e events.Event
		if scan {
			if err := scanRecord(stored, &r); err != nil {
				return err
			}
			e = r.event()
		} else if e, _, err = events.DecodeRecord(stored); err != nil {
			return err
		}
		if len(e.Payload) == 0 && e.PayloadDigest != emptyDigest { // a blob
			// Cached like the Reader caches verified blobs, so that the
			// comparison is about validation only.
			b, ok := cache[e.PayloadDigest]
			if !ok {
				if b, err = os.ReadFile(filepath.Join(path, blobName(e.PayloadDigest))); err != nil {
					return err
				}
				if cached+len(b) <= DefaultMaxBufferedBlobs {
					cache[e.PayloadDigest] = b
					cached += len(b)
				}
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

// BenchmarkLoad compares Load (full validation) with plainLoad and
// plainScanLoad (decode only) on the same bundle, and the same three
// followed by Reconstruct (replay: the seed's meaning of "validation
// overhead"); the overhead is validated/plain - 1.
func BenchmarkLoad(b *testing.B) {
	dir, _ := benchBundles(b)
	validated := func(path string, _ int) ([]events.Event, error) {
		bd, err := Load(context.Background(), path)
		if err != nil {
			return nil, err
		}
		return bd.Events, nil
	}
	loaders := []struct {
		name string
		load func(string, int) ([]events.Event, error)
	}{{"plain", plainLoad}, {"plain-scan", plainScanLoad}, {"validated", validated}}
	for _, rebuild := range []bool{false, true} {
		for _, l := range loaders {
			name := l.name
			if rebuild {
				name = "replay-" + name
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					evs, err := l.load(dir, benchEvents)
					if err != nil || len(evs) != benchEvents {
						b.Fatal(err)
					}
					if rebuild {
						if _, err := Reconstruct(evs); err != nil {
							b.Fatal(err)
						}
					}
				}
				reportRate(b, benchEvents)
			})
		}
	}
}

// plainReplay streams the directory bundle's events.log into a State with
// no check (plainStream): replay without validation, the baseline of
// BenchmarkReplay.
func plainReplay(path string, scan bool) (*State, error) {
	st := NewState()
	if err := plainStream(path, scan, st.Apply); err != nil {
		return nil, err
	}
	return st, nil
}

// plainReplayAhead is plainReplay with the decoding moved to a goroutine
// ahead of the State, batched like Reader.Next's prefetching (same batch
// size, recycled batches, payloads copied into an arena): the
// baseline that gives replay without validation the same use of a second
// core that the validated replay gets.
func plainReplayAhead(path string) (*State, error) {
	ch := make(chan []events.Event, prefetchDepth)
	free := make(chan []events.Event, 1)
	errc := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		defer close(ch)
		b := make([]events.Event, 0, batchEvents)
		send := func() bool {
			select {
			case ch <- b:
			case <-stop:
				return false
			}
			select {
			case b = <-free:
				b = b[:0]
			default:
				b = make([]events.Event, 0, batchEvents)
			}
			return true
		}
		errc <- plainStream(path, false, func(e events.Event) error {
			if b = append(b, e); len(b) == batchEvents && !send() {
				return errors.New("stopped")
			}
			return nil
		})
		if len(b) > 0 {
			send()
		}
	}()
	st := NewState()
	var applyErr error
	for b := range ch {
		for i, e := range b {
			if applyErr == nil {
				applyErr = st.Apply(e)
			}
			b[i] = events.Event{}
		}
		select {
		case free <- b:
		default:
		}
		if applyErr != nil && stop != nil {
			close(stop)
			stop = nil
		}
	}
	if err := errors.Join(<-errc, applyErr); err != nil {
		return nil, err
	}
	return st, nil
}

// BenchmarkReplay is the seed's "replay with validation against replay
// without": both stream the bundle's events into a State, one event at a
// time, without collecting them. validated is ReplayTo (every check of
// Verify, run ahead of the State on the Reader's goroutine); plain and
// plain-scan read events.log with no check at all, on the caller's
// goroutine; plain-ahead decodes on a goroutine ahead of the State like
// validated does. The overhead is validated/plain-ahead - 1 (and
// validated/plain - 1). Run with -cpu 1,2: at -cpu 1 validation cannot
// overlap the State and the overhead is its whole CPU cost. tape=256B is the bundle of
// 256-byte payloads of the other benchmarks; tape=realistic is 1000 runs
// shaped like package fallback's (realisticTape: prompts, completions,
// diffs; the prompts are blobs).
func BenchmarkReplay(b *testing.B) {
	dir256, _ := benchBundles(b)
	real := filepath.Join(b.TempDir(), "realistic.bundle")
	realEvs := realisticTape(b, 1000)
	require.NoError(b, Write(context.Background(), real, &Bundle{Metadata: testMeta(), Events: realEvs}))
	for _, tape := range []struct {
		name, dir string
		n         int
	}{{"256B", dir256, benchEvents}, {"realistic", real, len(realEvs)}} {
		var want *State
		for _, tc := range []struct {
			name string
			run  func() (*State, error)
		}{
			{"plain", func() (*State, error) { return plainReplay(tape.dir, false) }},
			{"plain-scan", func() (*State, error) { return plainReplay(tape.dir, true) }},
			{"plain-ahead", func() (*State, error) { return plainReplayAhead(tape.dir) }},
			{"validated", func() (*State, error) { return ReplayTo(context.Background(), tape.dir, 0) }},
		} {
			b.Run("tape="+tape.name+"/"+tc.name, func(b *testing.B) {
				var st *State
				var err error
				for b.Loop() {
					if st, err = tc.run(); err != nil {
						b.Fatal(err)
					}
				}
				if want == nil {
					want = st
				}
				require.Equal(b, want, st, "every variant must reach the same state")
				reportRate(b, tape.n)
			})
		}
	}
}

// BenchmarkValidationOverhead measures the overhead directly: each round
// replays the same bundle into a State once without validation
// (plainReplayAhead) and once with it (ReplayTo), in alternating order, so
// that the two share the machine's state and drift; overhead-% is
// validated/plain - 1 over all rounds. procs=1 runs at GOMAXPROCS 1, where
// validation cannot overlap the State (its CPU cost); procs=N at the
// default, where it runs beside it (the wall time a user sees).
func BenchmarkValidationOverhead(b *testing.B) {
	root := b.TempDir()
	tapes := []struct {
		name string
		evs  []events.Event
	}{{"256B", syntheticTape(b, 50_000, 256)}, {"realistic", realisticTape(b, 1000)}}
	procs := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		procs = append(procs, n)
	}
	for _, tape := range tapes {
		dir := filepath.Join(root, tape.name+".bundle")
		require.NoError(b, Write(context.Background(), dir, &Bundle{Metadata: testMeta(), Events: tape.evs}))
		for _, p := range procs {
			b.Run(fmt.Sprintf("tape=%s/procs=%d", tape.name, p), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(p))
				var plain, validated time.Duration
				timed := func(d *time.Duration, f func() (*State, error)) {
					start := time.Now()
					if _, err := f(); err != nil {
						b.Fatal(err)
					}
					*d += time.Since(start)
				}
				round := 0
				for b.Loop() {
					runPlain := func() { timed(&plain, func() (*State, error) { return plainReplayAhead(dir) }) }
					runValidated := func() {
						timed(&validated, func() (*State, error) { return ReplayTo(context.Background(), dir, 0) })
					}
					if round%2 == 0 {
						runPlain()
						runValidated()
					} else {
						runValidated()
						runPlain()
					}
					round++
				}
				b.ReportMetric(100*(float64(validated)/float64(plain)-1), "overhead-%")
				b.ReportMetric(float64(len(tape.evs))*float64(round)/validated.Seconds(), "validated-events/s")
			})
		}
	}
}

// realisticTape is many realistic runs back to back, renumbered into one
// tape: what a shard of the gate produces.
func realisticTape(t testing.TB, runs int) []events.Event {
	t.Helper()
	var out []events.Event
	for i := range runs {
		base := uint64(len(out))
		for _, e := range realisticRunOf(t, i%len(packages), i) {
			e.Seq += base
			if e.Parent != 0 {
				e.Parent += base
			}
			e.AuditEventID = fmt.Sprintf("audit-%d-%s", i, e.AuditEventID)
			e.EmittedAt = e.EmittedAt.Add(time.Duration(i) * time.Second)
			out = append(out, e)
		}
	}
	return out
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

// BenchmarkCompression writes realistic tapes (runs shaped like package
// fallback's, cycling over 10 advisories) and reports two ratios: "ratio"
// is the raw tape (the sum of its canonical records) over the single file;
// "dir-ratio" is the directory form (blobs already deduplicated) over the
// single file, i.e. what zstd alone gains. The tapes are synthetic
// (realisticRunOf); BenchmarkCompressionTier uses the tier's real tapes.
func BenchmarkCompression(b *testing.B) {
	for _, runs := range []int{1, 50, 1000} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			evs := realisticTape(b, runs)
			raw := 0
			for _, e := range evs {
				raw += len(events.AppendRecord(nil, e))
			}
			bd := &Bundle{Metadata: testMeta(), Events: evs}
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

// TestVerifyMemory1M verifies a 1,000,000-event bundle (256-byte payloads),
// then replays it into a State, and checks that the heap stays under 64 MiB
// while it does. It writes
// ~330 MB, so it is opt-in: REPLAY_BIG=1 go test -run Memory1M -v ./replay
// With REPLAY_BIG_OUT=DIR the bundles are kept in DIR, so that the peak RSS
// of the command can be measured too:
//
//	/usr/bin/time -v go run ./cmd/replay verify DIR/big-directory
func TestVerifyMemory1M(t *testing.T) {
	if os.Getenv("REPLAY_BIG") == "" {
		t.Skip("set REPLAY_BIG=1 to run (writes ~330 MB)")
	}
	const n = 1_000_000
	seq := func(yield func(events.Event) bool) {
		base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for i := range n {
			p := syntheticPayload(i, 256)
			e := events.Event{Seq: uint64(i + 1), Parent: uint64(i), Kind: kindResponded, Payload: p, PayloadDigest: events.Sum(p), EmittedAt: base.Add(time.Duration(i))}
			if !yield(e) {
				return
			}
		}
	}
	for _, form := range []Form{FormDir, FormFile} {
		t.Run(string(form), func(t *testing.T) {
			root := os.Getenv("REPLAY_BIG_OUT") // keep the bundles there, to measure the command's RSS
			if root == "" {
				root = t.TempDir()
			}
			path := filepath.Join(root, "big-"+string(form))
			p, err := makePlanSeq(testMeta(), nil, nil, iter.Seq[events.Event](seq))
			require.NoError(t, err)
			if form == FormFile {
				require.NoError(t, p.writeFile(context.Background(), path, false))
			} else {
				require.NoError(t, p.writeDir(context.Background(), path, false))
			}
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := samplePeakHeap()
			start := time.Now()
			rep, err := Verify(context.Background(), path)
			el := time.Since(start)
			top := stop()
			require.NoError(t, err)
			require.Equal(t, uint64(n), rep.Events)
			t.Logf("%s form: verified %d events in %v (%.0f events/s); heap in use before %.1f MiB, peak during %.1f MiB",
				form, n, el, float64(n)/el.Seconds(), float64(before.HeapInuse)/(1<<20), float64(top)/(1<<20))
			require.Less(t, top, uint64(64<<20), "peak heap during Verify")

			// Streaming replay into a State (validating ahead on the
			// Reader's goroutine) is bounded the same way.
			runtime.GC()
			stop = samplePeakHeap()
			start = time.Now()
			st, err := ReplayTo(context.Background(), path, 0)
			el = time.Since(start)
			top = stop()
			require.NoError(t, err)
			require.Equal(t, uint64(n), st.At)
			t.Logf("%s form: replayed %d events into a State in %v (%.0f events/s); peak heap %.1f MiB",
				form, n, el, float64(n)/el.Seconds(), float64(top)/(1<<20))
			require.Less(t, top, uint64(64<<20), "peak heap during ReplayTo")
		})
	}
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
// record (events.Chainer). Verify's events/s is bounded by this.
func BenchmarkHashFloor(b *testing.B) {
	evs := syntheticTape(b, 4096, 256)
	headers := make([][]byte, len(evs))
	for i, e := range evs {
		e.Payload = nil
		headers[i] = events.AppendRecord(nil, e)
	}
	for b.Loop() {
		var c events.Chainer
		for i, h := range headers {
			if events.Sum(evs[i].Payload) != evs[i].PayloadDigest {
				b.Fatal("digest")
			}
			c.AddRecord(h)
		}
	}
	reportRate(b, len(evs))
}
