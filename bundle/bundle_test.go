package bundle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/codegenie/codegenie/events"
)

// requireSameBundle compares what was written with what was read back.
func requireSameBundle(t testing.TB, want, got *Bundle) {
	t.Helper()
	require.Equal(t, want.Metadata, got.Metadata)
	require.Equal(t, len(want.Runs), len(got.Runs))
	for i, w := range want.Runs {
		g := got.Runs[i]
		require.Equal(t, w.ID, g.ID)
		require.Equal(t, len(w.Pin), len(g.Pin))
		for k, v := range w.Pin {
			require.Equal(t, v, g.Pin[k])
		}
		require.Equal(t, string(w.Output), string(g.Output))
		require.Equal(t, w.Error, g.Error)
		require.Equal(t, len(w.Events), len(g.Events))
		for j := range g.Events {
			if diff := pretty.Diff(w.Events[j], g.Events[j]); len(diff) > 0 {
				t.Fatalf("run %s event %d differs:\n%v", w.ID, j, diff)
			}
		}
		require.Equal(t, events.Chain(w.Events, 0), events.Chain(g.Events, 0))
	}
	require.Equal(t, want.Snapshot, got.Snapshot)
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	evs := realisticRun(t, 0)
	withSnap := single(evs)
	snap, err := withSnap.Runs[0].Snapshot(4, newTally())
	require.NoError(t, err)
	withSnap.Snapshot = snap
	// Edge cases earlier rapid failures found: a time at the Unix epoch,
	// one seq on many lanes, a blob on a lane.
	edge := []events.Event{{Seq: 1, Kind: "k", PayloadDigest: events.Sum(nil), EmittedAt: time.Unix(0, 0).UTC()}}
	for _, lane := range []string{"l", "ll", "lll"} {
		edge = append(edge, events.Event{Seq: 1, Kind: "k", Lane: lane, PayloadDigest: events.Sum(nil)})
	}
	big := bytes.Repeat([]byte{'x'}, blobThreshold+7)
	edge = append(edge, events.Event{Seq: 1, Kind: "k", Lane: "llll", Payload: big, PayloadDigest: events.Sum(big)})
	failed := single(evs[:3])
	failed.Runs[0].Error, failed.Runs[0].Output = "transform failed: no diff", nil
	for _, tc := range []struct {
		name string
		b    *Bundle
	}{
		{"realistic", single(evs)},
		{"with snapshot", withSnap},
		{"synthetic", single(syntheticTape(t, 300, 256))},
		{"failed run", failed},
		{"edge cases", single(edge)},
		{"many runs", manyRuns(realisticRun(t, 0), realisticRun(t, 1), realisticRun(t, 0), nil)},
		{"no runs", &Bundle{Metadata: testMeta()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, file := writeBoth(t, tc.b)
			var digests []events.Digest
			for _, p := range []string{dir, file} {
				got, err := Config{}.Load(ctx, p)
				require.NoError(t, err, p)
				want := *tc.b
				want.Metadata.GoVersion = got.Metadata.GoVersion
				requireSameBundle(t, &want, got)
				rep, err := Config{}.Verify(ctx, p)
				require.NoError(t, err)
				require.Len(t, rep.Runs, len(tc.b.Runs))
				for i, r := range tc.b.Runs {
					require.Equal(t, events.Chain(r.Events, 0), rep.Runs[i].Chain)
				}
				digests = append(digests, rep.Digest)
			}
			require.Equal(t, digests[0], digests[1], "both forms carry the same manifest, so the same bundle digest")
		})
	}
}

// TestRunsShareBlobs: equal payloads and outputs of many runs are one blob.
func TestRunsShareBlobs(t *testing.T) {
	b := manyRuns(realisticRun(t, 0), realisticRun(t, 0), realisticRun(t, 0))
	dir, _ := writeBoth(t, b)
	want := map[string]bool{}
	for _, r := range b.Runs {
		for _, e := range r.Events {
			if len(e.Payload) >= blobThreshold {
				want[e.PayloadDigest.String()] = true
			}
		}
		want[events.Sum(r.Output).String()] = true
	}
	require.Len(t, want, 3, "one prompt and two outputs (run 1's differs)")
	ents, err := os.ReadDir(filepath.Join(dir, blobDir))
	require.NoError(t, err)
	got := map[string]bool{}
	for _, e := range ents {
		got[e.Name()] = true
	}
	require.Equal(t, want, got)
}

func TestFileFormIsDeterministic(t *testing.T) {
	b := manyRuns(realisticRun(t, 0), realisticRun(t, 1))
	var files [][]byte
	for i := range 3 {
		if i == 1 {
			// Two GCs empty the encoder pool: this write uses a fresh
			// encoder, the next one a reused one.
			runtime.GC()
			runtime.GC()
		}
		_, f := writeBoth(t, b)
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		files = append(files, data)
	}
	require.True(t, bytes.Equal(files[0], files[1]), "same bundle, different file bytes")
	require.True(t, bytes.Equal(files[1], files[2]), "same bundle, different file bytes")
	shuffled := manyRuns(realisticRun(t, 0), realisticRun(t, 1))
	shuffled.Runs[0], shuffled.Runs[1] = shuffled.Runs[1], shuffled.Runs[0]
	_, f := writeBoth(t, shuffled)
	data, err := os.ReadFile(f)
	require.NoError(t, err)
	require.True(t, bytes.Equal(files[0], data), "the order of runs given does not reach the bytes")
}

// TestFileFormUnpacksToDirectoryForm checks the documented promise with the
// system's tar and zstd when they are installed.
func TestFileFormUnpacksToDirectoryForm(t *testing.T) {
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("zstd not installed")
	}
	dir, file := writeBoth(t, single(realisticRun(t, 0)))
	out := filepath.Join(t.TempDir(), "unpacked")
	require.NoError(t, os.Mkdir(out, 0o755))
	cmd := exec.Command("sh", "-c", `zstd -dc "$1" | tar -x -C "$2"`, "sh", file, out)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, string(msg))
	for _, name := range []string{manifestFile, metadataFile, runsFile, eventsFile} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
	_, err = Config{}.Verify(context.Background(), out)
	require.NoError(t, err)
}

func TestWriteRefusesInvalidRuns(t *testing.T) {
	good := realisticRun(t, 0)
	for _, tc := range []struct {
		name   string
		mutate func(*Bundle)
		want   error
	}{
		{"bad digest", func(b *Bundle) { b.Runs[0].Events[2].Payload = []byte(`{}`) }, errDigest},
		{"empty kind", func(b *Bundle) { b.Runs[0].Events[2].Kind = "" }, errRequired},
		{"gap", func(b *Bundle) { e := b.Runs[0].Events; b.Runs[0].Events = append(e[:2:2], e[3:]...) }, errOrder},
		{"lanes out of order", func(b *Bundle) {
			e := b.Runs[0].Events
			e[2].Seq, e[2].Lane, e[1].Lane = 2, "a", "b"
		}, errOrder},
		{"no scenario", func(b *Bundle) { b.Metadata.Scenario = "" }, errRequired},
		{"no run ID", func(b *Bundle) { b.Runs[0].ID = "" }, errRequired},
		{"a comma in a run ID", func(b *Bundle) { b.Runs[0].ID = "a,b" }, errMalformed},
		{"two runs, one ID", func(b *Bundle) { b.Runs = append(b.Runs, b.Runs[0]) }, errMalformed},
		{"empty pin name", func(b *Bundle) { b.Runs[0].Pin = map[string]string{"": "x"} }, errRequired},
		{"snapshot of no run", func(b *Bundle) {
			b.Snapshot = &Snapshot{Run: "other", At: 1, Records: 1, Fold: "f", State: []byte("{}")}
		}, errMissing},
		{"snapshot off the log", func(b *Bundle) {
			b.Snapshot = &Snapshot{Run: b.Runs[0].ID, At: 2, Records: 2, Fold: "f", State: []byte("{}")}
		}, errChain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := single(cloneEvents(good))
			tc.mutate(b)
			err := Config{}.Write(context.Background(), filepath.Join(t.TempDir(), "b"), b)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func cloneEvents(evs []events.Event) []events.Event {
	out := make([]events.Event, len(evs))
	for i, e := range evs {
		e.Payload = bytes.Clone(e.Payload)
		out[i] = e
	}
	return out
}

func TestWriteReplacesAtomically(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "b")
	require.NoError(t, Config{}.Write(ctx, dir, single(realisticRun(t, 0))))
	require.ErrorIs(t, Config{}.Write(ctx, dir, single(realisticRun(t, 1))), ErrExists)
	require.NoError(t, Config{Force: true}.Write(ctx, dir, single(realisticRun(t, 1))))
	got, err := Config{}.Load(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, events.Chain(realisticRun(t, 1), 0), events.Chain(got.Runs[0].Events, 0))
	ents, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	require.Len(t, ents, 1, "temporary directories left behind")
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, file := writeBoth(t, single(syntheticTape(t, 10, 64)))
	_, err := Config{}.Verify(ctx, file)
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
}

// TestContextCancelledWhileReading: cancelling the context of an open
// Reader stops it at the next record, with the context's cause.
func TestContextCancelledWhileReading(t *testing.T) {
	_, file := writeBoth(t, single(syntheticTape(t, 5*batchEvents, 64)))
	ctx, cancel := context.WithCancelCause(context.Background())
	r, err := Config{}.Open(ctx, file)
	require.NoError(t, err)
	defer r.Close()
	_, _, err = r.Next()
	require.NoError(t, err)
	stop := errors.New("stopped by the test")
	cancel(stop)
	for err == nil {
		_, _, err = r.Next()
	}
	require.ErrorIs(t, err, stop)
}

func TestNotABundle(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.txt")
	require.NoError(t, os.WriteFile(p, []byte("hello, world"), 0o644))
	_, err := Config{}.Verify(context.Background(), p)
	require.ErrorIs(t, err, errMalformed)
	_, err = Config{}.Verify(context.Background(), filepath.Join(t.TempDir(), "absent"))
	var be *BundleError
	require.ErrorAs(t, err, &be)
}

// TestNoGoroutineOutlivesVerify: the zstd decoder runs synchronously and is
// put back with the Reader; Load's prefetching goroutine ends with it.
func TestNoGoroutineOutlivesVerify(t *testing.T) {
	_, file := writeBoth(t, single(realisticRun(t, 0)))
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for range 5 {
		_, err := Config{}.Verify(context.Background(), file)
		require.NoError(t, err)
		_, err = Config{}.Load(context.Background(), file)
		require.NoError(t, err)
	}
}

// TestOldVersionIsRefused: a bundle of format version 1 is refused with a
// message naming both versions and what to do.
func TestOldVersionIsRefused(t *testing.T) {
	dir, _ := writeBoth(t, single(realisticRun(t, 0)))
	rewriteManifest(t, dir, func(m *bundleManifest) { m.Format = formatPrefix + "1" })
	_, err := Config{}.Verify(context.Background(), dir)
	require.ErrorIs(t, err, errVersion)
	for _, want := range []string{"codegenie-replay-bundle/1", bundleFormat, "write the bundle again", "the codegenie version that wrote it"} {
		require.Contains(t, err.Error(), want)
	}
}
