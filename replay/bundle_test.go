package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	evs := realisticRun(t, 0)
	snap, err := MakeSnapshot(evs, 4)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    *Bundle
	}{
		{"realistic", &Bundle{Metadata: testMeta(), Events: evs}},
		{"with snapshot", &Bundle{Metadata: testMeta(), Events: evs, Snapshot: snap}},
		{"synthetic", &Bundle{Metadata: testMeta(), Events: syntheticTape(t, 300, 256)}},
		{"empty", &Bundle{Metadata: testMeta()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, file := writeBoth(t, tc.b)
			for _, p := range []string{dir, file} {
				got, err := Load(ctx, p)
				require.NoError(t, err, p)
				require.Equal(t, len(tc.b.Events), len(got.Events))
				for i := range got.Events {
					if diff := pretty.Diff(tc.b.Events[i], got.Events[i]); len(diff) > 0 {
						t.Fatalf("%s: event %d differs:\n%v", p, i, diff)
					}
				}
				require.Equal(t, events.Chain(tc.b.Events), events.Chain(got.Events))
				require.Equal(t, tc.b.Metadata, got.Metadata)
				require.Equal(t, tc.b.Snapshot != nil, got.Snapshot != nil)
				rep, err := Verify(ctx, p)
				require.NoError(t, err)
				require.Equal(t, uint64(len(tc.b.Events)), rep.Events)
				require.Equal(t, events.Chain(tc.b.Events), rep.Chain)
			}
			// Both forms carry the same manifest, so the same bundle digest.
			rd, err := Verify(ctx, dir)
			require.NoError(t, err)
			rf, err := Verify(ctx, file)
			require.NoError(t, err)
			require.Equal(t, rd.Digest, rf.Digest)
		})
	}
}

func TestBlobsHoldLargePayloads(t *testing.T) {
	evs := realisticRun(t, 0)
	dir, _ := writeBoth(t, &Bundle{Metadata: testMeta(), Events: evs})
	ents, err := os.ReadDir(filepath.Join(dir, BlobDir))
	require.NoError(t, err)
	want := map[string]bool{}
	for _, e := range evs {
		if len(e.Payload) >= BlobThreshold {
			want[e.PayloadDigest.String()] = true
		}
	}
	require.NotEmpty(t, want, "the realistic run must have a payload over BlobThreshold")
	got := map[string]bool{}
	for _, e := range ents {
		got[e.Name()] = true
	}
	require.Equal(t, want, got)
}

func TestFileFormIsDeterministic(t *testing.T) {
	b := &Bundle{Metadata: testMeta(), Events: realisticTape(t, 20)}
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
}

// TestFileFormUnpacksToDirectoryForm checks the documented promise with the
// system's tar and zstd when they are installed.
func TestFileFormUnpacksToDirectoryForm(t *testing.T) {
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("zstd not installed")
	}
	b := &Bundle{Metadata: testMeta(), Events: realisticRun(t, 0)}
	dir, file := writeBoth(t, b)
	out := filepath.Join(t.TempDir(), "unpacked")
	require.NoError(t, os.Mkdir(out, 0o755))
	cmd := exec.Command("sh", "-c", `zstd -dc "$1" | tar -x -C "$2"`, "sh", file, out)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, string(msg))
	for _, name := range []string{ManifestFile, MetadataFile, EventsFile} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
	_, err = Verify(context.Background(), out)
	require.NoError(t, err)
}

func TestFailedBundleIsUnavailable(t *testing.T) {
	m := testMeta()
	m.Status, m.Error = StatusFailed, "cassette miss"
	dir, file := writeBoth(t, &Bundle{Metadata: m})
	for _, p := range []string{dir, file} {
		_, err := Verify(context.Background(), p)
		require.ErrorIs(t, err, ErrReplayUnavailable)
		var be *BundleError
		require.ErrorAs(t, err, &be)
		require.Equal(t, MetadataFile, be.File)
		require.Contains(t, err.Error(), "cassette miss")
	}
}

func TestWriteRefusesInvalidEvents(t *testing.T) {
	good := realisticRun(t, 0)
	for _, tc := range []struct {
		name   string
		mutate func([]events.Event) []events.Event
		meta   func(*Metadata)
		want   error
	}{
		{name: "bad digest", mutate: func(e []events.Event) []events.Event { e[2].Payload = []byte(`{}`); return e }, want: ErrDigest},
		{name: "empty kind", mutate: func(e []events.Event) []events.Event { e[2].Kind = ""; return e }, want: ErrRequired},
		{name: "gap", mutate: func(e []events.Event) []events.Event { return append(e[:2:2], e[3:]...) }, want: ErrOrder},
		{name: "lanes out of order", mutate: func(e []events.Event) []events.Event {
			e[2].Seq, e[2].Lane, e[1].Lane = 2, "a", "b"
			return e
		}, want: ErrOrder},
		{name: "no status", meta: func(m *Metadata) { m.Status = "" }, want: ErrRequired},
		{name: "no run key", meta: func(m *Metadata) { m.Pin.RunKey = "" }, want: ErrRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := cloneEvents(good)
			if tc.mutate != nil {
				evs = tc.mutate(evs)
			}
			m := testMeta()
			if tc.meta != nil {
				tc.meta(&m)
			}
			err := Write(context.Background(), filepath.Join(t.TempDir(), "b"), &Bundle{Metadata: m, Events: evs})
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
	require.NoError(t, Write(ctx, dir, &Bundle{Metadata: testMeta(), Events: realisticRun(t, 0)}))
	require.ErrorIs(t, Write(ctx, dir, &Bundle{Metadata: testMeta(), Events: realisticRun(t, 1)}), ErrExists)
	require.NoError(t, WriteOptions{Force: true}.Write(ctx, dir, &Bundle{Metadata: testMeta(), Events: realisticRun(t, 1)}))
	got, err := Load(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, events.Chain(realisticRun(t, 1)), events.Chain(got.Events))
	ents, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	require.Len(t, ents, 1, "temporary directories left behind")
}

func TestWriteRun(t *testing.T) {
	dir := t.TempDir()
	m := testMeta()
	m.GoVersion, m.Status = "", ""
	p, err := WriteRun(dir, m, realisticRun(t, 0))
	require.NoError(t, err)
	require.Equal(t, dir, filepath.Dir(p))
	rep, err := Verify(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, StatusCaptured, rep.Metadata.Status)
	require.NotEmpty(t, rep.Metadata.GoVersion)
	p2, err := WriteRun(dir, m, realisticRun(t, 1))
	require.NoError(t, err)
	require.NotEqual(t, p, p2, "divergent runs must not overwrite each other")
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, file := writeBoth(t, &Bundle{Metadata: testMeta(), Events: syntheticTape(t, 10, 64)})
	_, err := Verify(ctx, file)
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
}

func TestPendingBundleVerifies(t *testing.T) {
	m := testMeta()
	m.Status = StatusPending
	evs := realisticRun(t, 0)[:3]
	_, file := writeBoth(t, &Bundle{Metadata: m, Events: evs})
	rep, err := Verify(context.Background(), file)
	require.NoError(t, err)
	require.Equal(t, StatusPending, rep.Metadata.Status)
	require.Equal(t, uint64(3), rep.Events)
}

func TestNotABundle(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.txt")
	require.NoError(t, os.WriteFile(p, []byte("hello, world"), 0o644))
	_, err := Verify(context.Background(), p)
	require.ErrorIs(t, err, ErrMalformed)
	_, err = Verify(context.Background(), filepath.Join(t.TempDir(), "absent"))
	var be *BundleError
	require.ErrorAs(t, err, &be)
}

// TestNoGoroutineOutlivesVerify: the zstd decoder runs synchronously and is
// closed with the Reader; Load's prefetching goroutine ends with it.
func TestNoGoroutineOutlivesVerify(t *testing.T) {
	_, file := writeBoth(t, &Bundle{Metadata: testMeta(), Events: realisticRun(t, 0)})
	before := runtime.NumGoroutine()
	for range 5 {
		_, err := Verify(context.Background(), file)
		require.NoError(t, err)
		_, err = Load(context.Background(), file)
		require.NoError(t, err)
	}
	noGoroutineLeft(t, before)
}
