package bundle

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// bombPlan plans a bundle of refs events that refer in turn to nblobs
// distinct blobs of MaxBlob bytes each (one repeated byte: the single file
// stays small). One blob referred to by many events is a reference bomb;
// many large blobs, a blob bomb. It is assembled here, not by makePlan,
// so that each blob is hashed once.
func bombPlan(t testing.TB, nblobs, refs int) *plan {
	t.Helper()
	meta, err := events.Canonical(testMeta())
	require.NoError(t, err)
	p := &plan{files: []planFile{{name: metadataFile, data: meta}}}
	digests := make([]events.Digest, nblobs)
	for i := range digests {
		b := bytes.Repeat([]byte{'a'}, maxBlob)
		b[0] = byte('A' + i)
		digests[i] = events.Sum(b)
		p.files = append(p.files, planFile{name: blobName(digests[i]), data: b})
	}
	evs := make([]events.Event, refs)
	for i := range evs {
		evs[i] = events.Event{Seq: uint64(i + 1), Parent: uint64(i), Kind: "bomb", PayloadDigest: digests[i%nblobs]}
	}
	p.runs = []Run{{ID: "run-000", Events: evs}}
	require.NoError(t, p.seal())
	return p
}

// TestBombsStayBounded reads a reference bomb (one 64 MiB blob referred to
// by 40 events) and a blob bomb (four 64 MiB blobs) the ways the command
// does, diff and show, in both forms: each either works or fails with a
// *LimitError naming the bound, and the heap stays under 256 MiB. With
// BUNDLE_BOMB_OUT=DIR the bombs are kept in DIR, to measure the command:
//
//	/usr/bin/time -v bundle diff DIR/reference.bundle.zst DIR/reference.bundle.zst
func TestBombsStayBounded(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("writes and hashes several hundred MiB")
	}
	root := os.Getenv("BUNDLE_BOMB_OUT") // keep the bombs there, to measure the command's RSS
	if root == "" {
		root = t.TempDir()
	}
	paths := map[string]string{}
	// The blob bomb's directory form is not a bomb (its 256 MiB are on
	// disk for anyone to see), and writing it is slow: single file only.
	for _, bomb := range []struct {
		name         string
		nblobs, refs int
		dir          bool
	}{{"reference", 1, 40, true}, {"blob", 4, 4, false}} {
		p := bombPlan(t, bomb.nblobs, bomb.refs)
		dir, file := filepath.Join(root, bomb.name+".bundle"), filepath.Join(root, bomb.name+FileExt)
		require.NoError(t, p.writeFile(context.Background(), file, false))
		paths[bomb.name+"/file"] = file
		if bomb.dir {
			require.NoError(t, p.writeDir(context.Background(), dir, false))
			paths[bomb.name+"/dir"] = dir
		}
		_, err := Config{}.Verify(context.Background(), file)
		require.NoError(t, err, "the bomb is a valid bundle")
	}
	show := func(p string) error {
		r, err := Config{}.Open(context.Background(), p)
		if err != nil {
			return err
		}
		defer r.Close()
		for {
			if _, _, err := r.Next(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	// diff compares the bomb with a copy of itself: two bundles to load.
	diff := func(p string) error {
		cp := filepath.Join(t.TempDir(), filepath.Base(p))
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			require.NoError(t, os.CopyFS(cp, os.DirFS(p)))
		} else {
			raw, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cp, raw, 0o644))
		}
		runtime.GC()
		_, err := Config{}.Diff(context.Background(), RunRef{Path: p}, RunRef{Path: cp})
		return err
	}
	for name, p := range paths {
		for op, f := range map[string]func(string) error{"show": show, "diff": diff} {
			t.Run(name+"/"+op, func(t *testing.T) {
				runtime.GC()
				stop := samplePeakHeap()
				err := f(p)
				peak := stop()
				t.Logf("peak heap %.0f MiB; %v", float64(peak)/(1<<20), err)
				if err != nil {
					var le *LimitError
					require.ErrorAs(t, err, &le)
					require.ErrorIs(t, err, errTooLarge)
					require.Contains(t, err.Error(), "Config."+le.Limit)
				}
				require.Less(t, peak, uint64(256<<20))
			})
		}
	}
}

// stringBombPlan plans a bundle of one run of n events whose lane and
// audit ID are 4,000 bytes each, identical on every event: the single
// file compresses them to about 43 bytes an event, and a read that held
// them all would hold 8 KB an event.
func stringBombPlan(t testing.TB, n int) *plan {
	t.Helper()
	meta, err := events.Canonical(testMeta())
	require.NoError(t, err)
	p := &plan{files: []planFile{{name: metadataFile, data: meta}}}
	lane, id := strings.Repeat("L", 4000), strings.Repeat("I", 4000)
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = events.Event{Seq: uint64(i + 1), Parent: uint64(i), Kind: "bomb", Lane: lane, AuditEventID: id, PayloadDigest: emptyDigest}
	}
	p.runs = []Run{{ID: "run-000", Events: evs}}
	require.NoError(t, p.seal())
	return p
}

// TestStringBombs diffs and merges string bombs (see stringBombPlan) with
// a copy of themselves under the default Config: each fails with a
// *LimitError naming MaxLoadedBytes, and the heap stays under 256 MiB.
// The bomb of 20,000 events (850 KB, 160 MB of strings) runs always; with
// BUNDLE_BIG=1 the 8 MB and 16 MB bombs (190,000 and 380,000 events) run
// too, and with BUNDLE_BOMB_OUT=DIR they are kept in DIR, to measure the
// command:
//
//	/usr/bin/time -f %M bundle diff DIR/strings-8MB.bundle.zst DIR/strings-8MB-copy.bundle.zst
func TestStringBombs(t *testing.T) {
	if raceEnabled {
		t.Skip("hashes hundreds of MB")
	}
	sizes := map[string]int{"strings-850KB": 20_000}
	if os.Getenv("BUNDLE_BIG") != "" {
		sizes["strings-8MB"], sizes["strings-16MB"] = 190_000, 380_000
	}
	root := os.Getenv("BUNDLE_BOMB_OUT")
	if root == "" {
		root = t.TempDir()
	}
	for _, name := range slices.Sorted(maps.Keys(sizes)) {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(root, name+FileExt)
			cp := filepath.Join(root, name+"-copy"+FileExt)
			func() { // the plan is dropped before anything is measured
				plan := stringBombPlan(t, sizes[name])
				require.NoError(t, plan.writeFile(context.Background(), p, true))
			}()
			raw, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cp, raw, 0o644))
			t.Logf("%s: %d bytes", p, len(raw))
			for op, f := range map[string]func() error{
				"diff": func() error {
					_, err := Config{}.Diff(context.Background(), RunRef{Path: p}, RunRef{Path: cp})
					return err
				},
				"merge": func() error {
					_, err := Config{}.Merge(context.Background(), p, cp)
					return err
				},
			} {
				runtime.GC()
				stop := samplePeakHeap()
				err := f()
				peak := stop()
				t.Logf("%s: peak heap %.0f MiB; %v", op, float64(peak)/(1<<20), err)
				var le *LimitError
				require.ErrorAs(t, err, &le, op)
				require.Equal(t, "MaxLoadedBytes", le.Limit, op)
				require.Less(t, peak, uint64(256<<20), op)
			}
		})
	}
}
