package bundle

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// TestVerifyMemory1M verifies a bundle of one run of 1,000,000 events
// (256-byte payloads), then folds it (tallyFold), and checks
// that the heap stays under 64 MiB while it does. It writes ~330 MB, so
// it is opt-in: BUNDLE_BIG=1 go test -run Memory1M -v ./bundle
// With BUNDLE_BIG_OUT=DIR the bundles are kept in DIR, so that the peak
// RSS of the command can be measured too:
//
//	/usr/bin/time -v bundle verify DIR/big-directory
func TestVerifyMemory1M(t *testing.T) {
	if os.Getenv("BUNDLE_BIG") == "" {
		t.Skip("set BUNDLE_BIG=1 to run (writes ~330 MB)")
	}
	const n = 1_000_000
	root := os.Getenv("BUNDLE_BIG_OUT")
	if root == "" {
		root = t.TempDir()
	}
	paths := map[string]string{formDir: filepath.Join(root, "big-directory"), formFile: filepath.Join(root, "big-file")}
	func() { // the tape is dropped before anything is measured
		evs := make([]events.Event, n)
		base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for i := range evs {
			p := syntheticPayload(i, 256)
			evs[i] = events.Event{Seq: uint64(i + 1), Parent: uint64(i), Kind: kindResponded, Payload: p, PayloadDigest: events.Sum(p), EmittedAt: base.Add(time.Duration(i))}
		}
		p, err := makePlan(single(evs))
		require.NoError(t, err)
		require.NoError(t, p.writeDir(context.Background(), paths[formDir], true))
		require.NoError(t, p.writeFile(context.Background(), paths[formFile], true))
	}()
	for _, form := range []string{formDir, formFile} {
		t.Run(string(form), func(t *testing.T) {
			path := paths[form]
			runtime.GC()
			stop := samplePeakHeap()
			start := time.Now()
			rep, err := Config{}.Verify(context.Background(), path)
			el := time.Since(start)
			top := stop()
			require.NoError(t, err)
			require.Equal(t, uint64(n), rep.Events)
			t.Logf("%s form: verified %d events in %v (%.0f events/s); peak heap %.1f MiB", form, n, el, float64(n)/el.Seconds(), float64(top)/(1<<20))
			require.Less(t, top, uint64(64<<20), "peak heap during Verify")

			runtime.GC()
			stop = samplePeakHeap()
			start = time.Now()
			st := newTally()
			_, err = Config{}.FoldTo(context.Background(), RunRef{Path: path}, 0, st)
			el = time.Since(start)
			top = stop()
			require.NoError(t, err)
			require.Equal(t, uint64(n), st.At)
			t.Logf("%s form: folded %d events in %v (%.0f events/s); peak heap %.1f MiB", form, n, el, float64(n)/el.Seconds(), float64(top)/(1<<20))
			require.Less(t, top, uint64(64<<20), "peak heap during FoldTo")
		})
	}
}
