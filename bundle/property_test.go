package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/events"
)

var allKinds = []events.Kind{
	kindStarted, kindQueried, kindRanked, kindClassified,
	kindBuilt, kindRequested, kindResponded, kindProduced,
	kindFailed, "custom.kind",
}

// genPayload draws a payload: usually a JSON object with the fields the
// state builder reads, sometimes JSON of another shape, sometimes not JSON,
// sometimes large enough to become a blob.
func genPayload() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		switch rapid.IntRange(0, 9).Draw(t, "shape") {
		case 0:
			return rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "raw")
		case 1:
			return []byte(fmt.Sprintf("[%d,%q]", rapid.Int().Draw(t, "n"), rapid.String().Draw(t, "s")))
		case 2:
			return bytes.Repeat([]byte{'x'}, rapid.IntRange(blobThreshold, blobThreshold+300).Draw(t, "blobsize"))
		}
		obj := map[string]any{}
		for _, f := range []string{"run_key", "band", "prompt", "completion", "diff", "error"} {
			if rapid.Bool().Draw(t, "has "+f) {
				obj[f] = rapid.StringN(0, 20, -1).Draw(t, f)
			}
		}
		if rapid.Bool().Draw(t, "has examples") {
			obj["examples"] = rapid.SliceOfN(rapid.IntRange(-5, 5), 0, 4).Draw(t, "examples")
		}
		if rapid.Bool().Draw(t, "has score") {
			obj["score"] = rapid.Float64Range(0, 1).Draw(t, "score")
		}
		b, err := events.Canonical(obj)
		if err != nil {
			t.Fatalf("canonical: %v", err)
		}
		return b
	})
}

// genTape draws a valid tape: dense seqs, occasionally the same seq on a
// greater lane, parents before children, nondeterministic fields set at
// random.
func genTape() *rapid.Generator[[]events.Event] {
	return rapid.Custom(func(t *rapid.T) []events.Event {
		n := rapid.IntRange(0, 30).Draw(t, "n")
		var evs []events.Event
		seq := uint64(0)
		lane := ""
		for i := range n {
			if seq > 0 && rapid.IntRange(0, 5).Draw(t, fmt.Sprintf("same seq %d", i)) == 0 {
				lane += "l"
			} else {
				seq++
				lane = rapid.SampledFrom([]string{"", "a"}).Draw(t, fmt.Sprintf("lane %d", i))
			}
			p := genPayload().Draw(t, fmt.Sprintf("payload %d", i))
			e := events.Event{
				Seq: seq, Parent: rapid.Uint64Range(0, seq-1).Draw(t, fmt.Sprintf("parent %d", i)),
				Kind: rapid.SampledFrom(allKinds).Draw(t, fmt.Sprintf("kind %d", i)), Lane: lane,
				Payload: p, PayloadDigest: events.Sum(p),
			}
			if rapid.Bool().Draw(t, fmt.Sprintf("stamped %d", i)) {
				e.EmittedAt = time.Unix(0, rapid.Int64Range(0, 1<<62).Draw(t, fmt.Sprintf("at %d", i))).UTC()
				e.AuditEventID = rapid.StringN(0, 8, -1).Draw(t, fmt.Sprintf("audit %d", i))
			}
			evs = append(evs, e)
		}
		return evs
	})
}

// genRun draws a run: one of a few IDs, a small pin, an output that is
// empty, short or large enough to become a blob, sometimes an error.
func genRun() *rapid.Generator[Run] {
	return rapid.Custom(func(t *rapid.T) Run {
		r := Run{ID: rapid.SampledFrom([]string{"run-000", "run-001", "run-002", "shard-b/run-7"}).Draw(t, "id"), Events: genTape().Draw(t, "tape")}
		if rapid.Bool().Draw(t, "pinned") {
			r.Pin = map[string]string{"run_key": rapid.StringN(0, 8, -1).Draw(t, "run_key"), "model": "m"}
		}
		switch rapid.IntRange(0, 2).Draw(t, "output") {
		case 1:
			r.Output = []byte(rapid.StringN(1, 30, -1).Draw(t, "short output"))
		case 2:
			r.Output = bytes.Repeat([]byte{'o'}, blobThreshold+rapid.IntRange(0, 99).Draw(t, "long output"))
		}
		if rapid.IntRange(0, 4).Draw(t, "failed") == 0 {
			r.Error = rapid.StringN(1, 20, -1).Draw(t, "error")
		}
		return r
	})
}

// genBundle draws a bundle of up to four runs with distinct IDs.
func genBundle() *rapid.Generator[*Bundle] {
	return rapid.Custom(func(t *rapid.T) *Bundle {
		b := &Bundle{Metadata: testMeta()}
		seen := map[string]bool{}
		for range rapid.IntRange(0, 4).Draw(t, "runs") {
			r := genRun().Draw(t, "run")
			if !seen[r.ID] {
				seen[r.ID] = true
				b.Runs = append(b.Runs, r)
			}
		}
		return b
	})
}

// sameRuns reports whether two bundles hold the same runs, in the same
// order, to the byte.
func sameRuns(a, b *Bundle) bool {
	if len(a.Runs) != len(b.Runs) {
		return false
	}
	for i := range a.Runs {
		if !equalInfo(&a.Runs[i], &b.Runs[i]) || events.Chain(a.Runs[i].Events, 0) != events.Chain(b.Runs[i].Events, 0) {
			return false
		}
	}
	return true
}

func TestPropertyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	i := 0
	rapid.Check(t, func(t *rapid.T) {
		b := genBundle().Draw(t, "bundle")
		want, err := sortedRuns(b.Runs)
		if err != nil {
			t.Fatalf("sort: %v", err)
		}
		i++
		// The directory form on disk every 10th bundle (fsync is slow);
		// the single file in memory always.
		paths := []string{""}
		if i%10 == 1 {
			p := filepath.Join(dir, fmt.Sprintf("b%d", i))
			if err := (Config{}).Write(context.Background(), p, b); err != nil {
				t.Fatalf("write: %v", err)
			}
			paths = append(paths, p)
		}
		for _, p := range paths {
			var got *Bundle
			var err error
			if p == "" {
				var file []byte
				if file, _, err = encodeBundleErr(b); err != nil {
					t.Fatalf("write: %v", err)
				}
				got, err = loadBytes(context.Background(), file, false)
			} else {
				got, err = Config{}.Load(context.Background(), p)
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if !sameRuns(&Bundle{Runs: want}, got) {
				t.Fatalf("runs differ after a round trip:\n%v", pretty.Diff(want, got.Runs))
			}
		}
	})
}

// TestPropertyPartialFold: folding from any snapshot boundary, through the
// snapshot's JSON encoding, reaches the same final state as folding the
// whole tape, for a test fold and for the generic fold.
func TestPropertyPartialFold(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := Run{ID: "r", Events: genTape().Draw(t, "tape")}
		if len(r.Events) == 0 {
			t.Skip("empty tape")
		}
		newFold := func() Folder { return newTally() }
		if rapid.Bool().Draw(t, "generic fold") {
			newFold = func() Folder { return &kindFold{} }
		}
		full := newFold()
		if err := fold(r.Events, full, nil); err != nil {
			t.Fatalf("reconstruct: %v", err)
		}
		at := r.Events[rapid.IntRange(0, len(r.Events)-1).Draw(t, "boundary")].Seq
		snap, err := r.Snapshot(at, newFold())
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		raw, err := events.Canonical(snap)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		var back Snapshot
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("decode: %v", err)
		}
		tail := r.Events[back.Records:]
		if rapid.Bool().Draw(t, "whole log") {
			tail = r.Events
		}
		part := newFold()
		if err := back.Resume(tail, part); err != nil {
			t.Fatalf("partial: %v", err)
		}
		want, err := events.Canonical(full)
		if err != nil {
			t.Fatalf("encode the full state: %v", err)
		}
		got, err := events.Canonical(part)
		if err != nil {
			t.Fatalf("encode the partial state: %v", err)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("partial fold from seq %d differs:\n%s\n%s", at, want, got)
		}
	})
}

// TestPropertySnapshotBundle: a bundle with a snapshot of any run at any
// boundary verifies.
func TestPropertySnapshotBundle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBundle().Draw(t, "bundle")
		var withEvents []int
		for i, r := range b.Runs {
			if len(r.Events) > 0 {
				withEvents = append(withEvents, i)
			}
		}
		if len(withEvents) == 0 {
			t.Skip("no run has events")
		}
		r := &b.Runs[rapid.SampledFrom(withEvents).Draw(t, "run")]
		at := r.Events[rapid.IntRange(0, len(r.Events)-1).Draw(t, "boundary")].Seq
		snap, err := r.Snapshot(at, newTally())
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		b.Snapshot = snap
		file, _, err := encodeBundleErr(b)
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		if _, err := loadBytes(context.Background(), file, false); err != nil {
			t.Fatalf("verify: %v", err)
		}
	})
}

// TestSnapshotInjectionRejected: a snapshot whose state is not the state
// its fold rebuilds from the records is refused by FoldTo, naming the
// snapshot; the bundle is otherwise valid (the manifest is re-sealed, as a
// careful forger would). It holds for a caller's fold and for the generic
// fold FoldTo uses when given none.
func TestSnapshotInjectionRejected(t *testing.T) {
	tests := []struct {
		name  string
		fresh func() Folder
		folds func() []Folder // what FoldTo is given
	}{
		{"caller's fold", func() Folder { return newTally() }, func() []Folder { return []Folder{newTally()} }},
		{"generic fold", func() Folder { return &kindFold{} }, func() []Folder { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := single(realisticRun(t, 0))
			snap, err := b.Runs[0].Snapshot(4, tt.fresh())
			require.NoError(t, err)
			b.Snapshot = snap
			dir, _ := writeBoth(t, b)
			_, err = Config{}.FoldTo(context.Background(), RunRef{Path: dir}, 0, tt.folds()...)
			require.NoError(t, err)
			forged := editDir(t, dir, func(d string) {
				s := *snap
				s.State = json.RawMessage(strings.Replace(string(snap.State), `"applied":4`, `"applied":5`, 1))
				require.NotEqual(t, string(snap.State), string(s.State))
				bs, err := events.Canonical(s)
				require.NoError(t, err)
				require.NoError(t, writeFileBytes(filepath.Join(d, snapshotFile), bs))
				rewriteManifest(t, d, func(m *bundleManifest) {
					for i := range m.Files {
						if m.Files[i].Path == snapshotFile {
							m.Files[i].Size, m.Files[i].Digest = int64(len(bs)), events.Sum(bs)
						}
					}
				})
			})
			_, err = Config{}.Verify(context.Background(), forged)
			require.NoError(t, err, "the structure is valid; only the fold can judge the state")
			_, err = Config{}.FoldTo(context.Background(), RunRef{Path: forged}, 0, tt.folds()...)
			require.ErrorIs(t, err, errDigest)
			var be *BundleError
			require.ErrorAs(t, err, &be)
			require.Equal(t, snapshotFile, be.File)
		})
	}
}

// TestPropertyMergeTapes: the shards of one tape, overlapping and in any
// order, merge back to the tape, idempotently.
func TestPropertyMergeTapes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := genTape().Draw(t, "tape")
		perm := shardTape(t, evs)
		m, err := mergeTapes(perm...)
		if err != nil {
			t.Fatalf("merge: %v", err)
		}
		if events.Chain(m, 0) != events.Chain(evs, 0) {
			t.Fatalf("merge changed the tape:\n%v", pretty.Diff(evs, m))
		}
		again, err := mergeTapes(m, m)
		if err != nil || events.Chain(again, 0) != events.Chain(m, 0) {
			t.Fatalf("merge is not idempotent: %v", err)
		}
		again, err = mergeTapes(append(perm, m)...)
		if err != nil || events.Chain(again, 0) != events.Chain(m, 0) {
			t.Fatalf("merging the result back changes it: %v", err)
		}
	})
}

// shardTape splits a tape into overlapping shards in a drawn order.
func shardTape(t *rapid.T, evs []events.Event) [][]events.Event {
	k := rapid.IntRange(1, 4).Draw(t, "shards")
	shards := make([][]events.Event, k)
	for i, e := range evs {
		for s := range k {
			if rapid.Bool().Draw(t, fmt.Sprintf("event %d in shard %d", i, s)) {
				shards[s] = append(shards[s], e)
			}
		}
	}
	// Every event must be somewhere: put the whole tape in a random shard.
	shards[rapid.IntRange(0, k-1).Draw(t, "full shard")] = slices.Clone(evs)
	return rapid.Permutation(shards).Draw(t, "order")
}

// TestPropertyMerge: bundles holding overlapping subsets of a bundle's
// runs (a run whole in one of them, its shards in others), merged in any
// order, give the bundle back; merge is idempotent.
func TestPropertyMerge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := genBundle().Draw(t, "bundle")
		want.Runs, _ = sortedRuns(want.Runs)
		k := rapid.IntRange(1, 4).Draw(t, "inputs")
		inputs := make([]*Bundle, k)
		for i := range inputs {
			inputs[i] = &Bundle{Metadata: want.Metadata}
		}
		for _, r := range want.Runs {
			for i, shard := range shardTape(t, r.Events) {
				if i >= k {
					break
				}
				c := r
				c.Events = shard
				j := (i + rapid.IntRange(0, k-1).Draw(t, "input")) % k
				inputs[j].Runs = append(inputs[j].Runs, c)
			}
			whole := inputs[rapid.IntRange(0, k-1).Draw(t, "whole in")]
			whole.Runs = append(whole.Runs, r)
		}
		for _, in := range inputs {
			in.Runs = uniqueByID(in.Runs)
		}
		m, err := mergeBundles(rapid.Permutation(inputs).Draw(t, "order"), nil)
		if err != nil {
			t.Fatalf("merge: %v", err)
		}
		if !sameRuns(want, m) {
			t.Fatalf("merge changed the runs:\n%v", pretty.Diff(want.Runs, m.Runs))
		}
		again, err := mergeBundles([]*Bundle{m, m}, nil)
		if err != nil || !sameRuns(m, again) {
			t.Fatalf("merge is not idempotent: %v", err)
		}
		again, err = mergeBundles(append(inputs, m), nil)
		if err != nil || !sameRuns(m, again) {
			t.Fatalf("merging the result back changes it: %v", err)
		}
	})
}

// uniqueByID keeps the last run of each ID (one bundle holds a run once).
func uniqueByID(runs []Run) []Run {
	idx := map[string]int{}
	var out []Run
	for _, r := range runs {
		if i, ok := idx[r.ID]; ok {
			out[i] = r
			continue
		}
		idx[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}

func TestMergeConflictNamesBoth(t *testing.T) {
	a := realisticRun(t, 0)
	b := cloneEvents(a)
	b[6].Payload = []byte(`{"text":"other"}`)
	b[6].PayloadDigest = events.Sum(b[6].Payload)
	_, err := mergeTapes(a, b)
	require.ErrorIs(t, err, ErrConflict)
	require.Contains(t, err.Error(), "seq 7")
	require.Contains(t, err.Error(), "input 0 event 6")
	require.Contains(t, err.Error(), "input 1 event 6")

	x, y := single(a), single(a)
	y.Runs[0].Output = []byte("another output")
	_, err = mergeBundles([]*Bundle{x, y}, nil)
	require.ErrorIs(t, err, ErrConflict)
	require.Contains(t, err.Error(), "run run-000")
	require.Contains(t, err.Error(), "outputs")
	other := single(a)
	other.Metadata.Scenario = "another scenario"
	_, err = mergeBundles([]*Bundle{x, other}, nil)
	require.ErrorIs(t, err, ErrConflict)
}
