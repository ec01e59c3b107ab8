package fallback_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/internal/eventrec"
	"github.com/codegenie/codegenie/internal/tape"
	"github.com/codegenie/codegenie/internal/tapetest"
)

// The benchmarks of this file measure folding a bundle (package bundle)
// into this pipeline's state, fallback.State: FoldTo, which validates every record
// ahead of the fold, against a plain read of the same events.log with no
// check at all.

// foldBenchEvents is the length of the tape of 256-byte payloads.
const foldBenchEvents = 200_000

// runKinds are the kinds of a successful Tier.Run as the steps of a
// realistic run (tapetest.Realistic).
var runKinds = tapetest.Kinds{
	Start: fallback.KindRunStarted, Query: fallback.KindRetrievalQueried, Rank: fallback.KindRetrievalRanked,
	Classify: fallback.KindBandClassified, Build: fallback.KindPromptBuilt, Request: fallback.KindLLMRequested,
	Respond: fallback.KindLLMResponded, Produce: fallback.KindTransformProduced,
}

// syntheticTape returns n events with payloadSize-byte JSON payloads and
// the kinds of a run over and over (tapetest.Synthetic).
func syntheticTape(n, payloadSize int) []events.Event {
	return tapetest.Synthetic(runKinds.List(), n, payloadSize)
}

// realisticTape is runs realistic runs (tapetest.Realistic: shaped like
// Tier.Run's tape, the prompt stored as a blob) back to back, cycling over
// the scenarios, renumbered into one tape.
func realisticTape(t testing.TB, runs int) []events.Event {
	t.Helper()
	var out []events.Event
	for i := range runs {
		evs, err := tapetest.Realistic(runKinds, i%tapetest.Scenarios, i)
		require.NoError(t, err)
		base := uint64(len(out))
		for _, e := range evs {
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

// writeTape writes evs as a directory bundle of one run at dir.
func writeTape(t testing.TB, dir string, evs []events.Event) {
	t.Helper()
	b := &bundle.Bundle{
		Metadata: bundle.Metadata{Scenario: "lodash-prototype-pollution", GoVersion: "go1.26.8", ToolVersion: "test"},
		Runs: []bundle.Run{{ID: "run-000", Pin: map[string]string{"run_key": "rk-0123456789abcdef", "cassette_id": "cas-1", "store_digest": "store-1"},
			Output: []byte("+lodash 4.17.21\n"), Events: evs}},
	}
	require.NoError(t, bundle.Config{}.Write(context.Background(), dir, b))
}

// The parts of the directory bundle format (see package bundle) the
// baseline reads: the first line of events.log, the bounds of a stored
// record and of its strings, and the payload size from which a payload is
// a blob.
const (
	logMagic      = "CGRLOG2\n"
	maxRecord     = 1 << 20
	maxString     = 4096
	blobThreshold = 1024
)

// plainStream streams the directory bundle's events.log to fn with no
// check at all, reading the framing package bundle specifies: records
// are parsed (eventrec.Parse), blobs read once and shared like
// bundle's Reader shares them, inline payloads copied into an arena like
// Reader.Next copies them. It is the baseline validation is measured
// against. fn owns each event's payload.
func plainStream(path string, fn func(events.Event) error) error {
	f, err := os.Open(filepath.Join(path, "events.log"))
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, maxRecord+64)
	magic := make([]byte, len(logMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != logMagic {
		return fmt.Errorf("%s: not an events.log (%v)", path, err)
	}
	limits := eventrec.Limits{MaxString: maxString, MaxPayload: blobThreshold - 1}
	empty := events.Sum(nil)
	var r eventrec.Record
	var a arena
	var kinds eventrec.Interner
	cache := map[events.Digest][]byte{}
	for {
		n, err := binary.ReadUvarint(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n == 0 { // a run's trailer: count and chain head
			if _, err := binary.ReadUvarint(br); err != nil {
				return err
			}
			if _, err := br.Discard(len(events.Digest{})); err != nil {
				return err
			}
			continue
		}
		frame, err := br.Peek(int(n) + len(events.Digest{})) // the record and its chain hash
		if err != nil {
			return err
		}
		if _, err := eventrec.Parse(frame[:n], &r, limits); err != nil {
			return err
		}
		e := tape.Event(&r, &kinds)
		if len(e.Payload) == 0 && e.PayloadDigest != empty { // a blob
			b, ok := cache[e.PayloadDigest]
			if !ok {
				if b, err = os.ReadFile(filepath.Join(path, "blobs", e.PayloadDigest.String())); err != nil {
					return err
				}
				cache[e.PayloadDigest] = b
			}
			e.Payload = b
		} else {
			e.Payload = a.copy(e.Payload)
		}
		if _, err := br.Discard(len(frame)); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// arena hands out copies of payloads carved from shared 32 KiB chunks, as
// bundle's Reader does.
type arena struct{ buf []byte }

func (a *arena) copy(p []byte) []byte {
	const chunk = 32 << 10
	if len(p) == 0 {
		return []byte{}
	}
	if len(p) > chunk/4 {
		return append([]byte(nil), p...)
	}
	if cap(a.buf)-len(a.buf) < len(p) {
		a.buf = make([]byte, 0, chunk)
	}
	n := len(a.buf)
	a.buf = append(a.buf, p...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// plainFold streams the directory bundle's events into a fresh
// fallback.State with no check (plainStream): a fold without validation,
// the baseline of BenchmarkFold.
func plainFold(path string) (*fallback.State, error) {
	st := fallback.NewState()
	return st, plainStream(path, st.Apply)
}

// validatedFold is bundle.Config.FoldTo into a fresh fallback.State.
func validatedFold(path string) (*fallback.State, error) {
	st := fallback.NewState()
	_, err := bundle.Config{}.FoldTo(context.Background(), bundle.RunRef{Path: path}, 0, st)
	return st, err
}

func reportRate(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkFold is a validated fold into state against a fold without
// validation: both stream the bundle's events into fallback.State, one
// event at a time, without collecting them. validated is bundle.Config.FoldTo
// (every check of bundle.Verify, run ahead of the fold on the Reader's
// goroutine); plain reads events.log with no check at all. Run it on one
// core, where validation cannot overlap the fold:
// go test -run '^$' -bench Fold -cpu 1 ./fallback
// tape=256B is one run of 200,000 events with 256-byte payloads;
// tape=realistic is 1000 runs shaped like Tier.Run's (prompts as blobs),
// renumbered into one run.
func BenchmarkFold(b *testing.B) {
	root := b.TempDir()
	dir256, real := filepath.Join(root, "256B.bundle"), filepath.Join(root, "realistic.bundle")
	writeTape(b, dir256, syntheticTape(foldBenchEvents, 256))
	realEvs := realisticTape(b, 1000)
	writeTape(b, real, realEvs)
	for _, tape := range []struct {
		name, dir string
		n         int
	}{{"256B", dir256, foldBenchEvents}, {"realistic", real, len(realEvs)}} {
		var want *fallback.State
		for _, tc := range []struct {
			name string
			run  func(string) (*fallback.State, error)
		}{{"plain", plainFold}, {"validated", validatedFold}} {
			b.Run("tape="+tape.name+"/"+tc.name, func(b *testing.B) {
				var st *fallback.State
				var err error
				for b.Loop() {
					if st, err = tc.run(tape.dir); err != nil {
						b.Fatal(err)
					}
				}
				if want == nil {
					want = st
				}
				require.Equal(b, want, st, "both reach the same state")
				require.Equal(b, uint64(tape.n), st.Applied)
				reportRate(b, tape.n)
			})
		}
	}
}

// BenchmarkValidationOverhead measures the overhead directly: each round
// folds the same bundle into fallback.State once without validation
// (plainFold) and once with it (bundle.Config.FoldTo), in alternating order,
// so that the two share the machine's state and drift; overhead-% is
// validated/plain - 1 over all rounds. procs=1 runs at GOMAXPROCS 1, where
// validation cannot overlap the fold (its CPU cost); procs=N at the
// default, where it runs beside it (the wall time a user sees).
func BenchmarkValidationOverhead(b *testing.B) {
	root := b.TempDir()
	tapes := []struct {
		name string
		evs  []events.Event
	}{{"256B", syntheticTape(50_000, 256)}, {"realistic", realisticTape(b, 1000)}}
	procs := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		procs = append(procs, n)
	}
	for _, tape := range tapes {
		dir := filepath.Join(root, tape.name+".bundle")
		writeTape(b, dir, tape.evs)
		for _, p := range procs {
			b.Run(fmt.Sprintf("tape=%s/procs=%d", tape.name, p), func(b *testing.B) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(p))
				var plain, validated time.Duration
				timed := func(d *time.Duration, f func(string) (*fallback.State, error)) {
					start := time.Now()
					if _, err := f(dir); err != nil {
						b.Fatal(err)
					}
					*d += time.Since(start)
				}
				round := 0
				for b.Loop() {
					if round%2 == 0 {
						timed(&plain, plainFold)
						timed(&validated, validatedFold)
					} else {
						timed(&validated, validatedFold)
						timed(&plain, plainFold)
					}
					round++
				}
				b.ReportMetric(100*(float64(validated)/float64(plain)-1), "overhead-%")
				b.ReportMetric(float64(len(tape.evs))*float64(round)/validated.Seconds(), "validated-events/s")
			})
		}
	}
}
