package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
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
			return bytes.Repeat([]byte{'x'}, rapid.IntRange(BlobThreshold, BlobThreshold+300).Draw(t, "blobsize"))
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

func TestPropertyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	i := 0
	rapid.Check(t, func(t *rapid.T) {
		evs := genTape().Draw(t, "tape")
		i++
		// The directory form on disk every 10th tape (fsync is slow); the
		// single file in memory always.
		paths := []string{""}
		if i%10 == 1 {
			p := filepath.Join(dir, fmt.Sprintf("b%d", i))
			if err := Write(context.Background(), p, &Bundle{Metadata: testMeta(), Events: evs}); err != nil {
				t.Fatalf("write: %v", err)
			}
			paths = append(paths, p)
		}
		for _, p := range paths {
			var got *Bundle
			var err error
			if p == "" {
				var file []byte
				if file, _, err = encodeBundleErr(&Bundle{Metadata: testMeta(), Events: evs}); err != nil {
					t.Fatalf("write: %v", err)
				}
				got, err = loadBytes(context.Background(), file, false)
			} else {
				got, err = Load(context.Background(), p)
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if events.Chain(got.Events) != events.Chain(evs) {
				t.Fatalf("chain differs after a round trip:\n%v", pretty.Diff(evs, got.Events))
			}
		}
	})
}

// TestPropertyPartialReplay: replay from any snapshot boundary, through the
// snapshot's JSON encoding, reaches the same final state as a full replay.
func TestPropertyPartialReplay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := genTape().Draw(t, "tape")
		if len(evs) == 0 {
			t.Skip("empty tape")
		}
		full, err := Reconstruct(evs)
		if err != nil {
			t.Fatalf("reconstruct: %v", err)
		}
		at := evs[rapid.IntRange(0, len(evs)-1).Draw(t, "boundary")].Seq
		snap, err := MakeSnapshot(evs, at)
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
		tail := evs[back.Records:]
		if rapid.Bool().Draw(t, "whole log") {
			tail = evs
		}
		part, err := ReconstructFrom(&back, tail)
		if err != nil {
			t.Fatalf("partial: %v", err)
		}
		a, _ := events.Canonical(full)
		b, _ := events.Canonical(part)
		if !bytes.Equal(a, b) {
			t.Fatalf("partial replay from seq %d differs:\n%v", at, pretty.Diff(full, part))
		}
	})
}

// TestPropertySnapshotBundle: a bundle with a snapshot verifies, and its
// snapshot state equals the state rebuilt up to it.
func TestPropertySnapshotBundle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := genTape().Draw(t, "tape")
		if len(evs) == 0 {
			t.Skip("empty tape")
		}
		at := evs[rapid.IntRange(0, len(evs)-1).Draw(t, "boundary")].Seq
		snap, err := MakeSnapshot(evs, at)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		file, _, err := encodeBundleErr(&Bundle{Metadata: testMeta(), Events: evs, Snapshot: snap})
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		if _, err := loadBytes(context.Background(), file, false); err != nil {
			t.Fatalf("verify: %v", err)
		}
	})
}

func TestSnapshotInjectionRejected(t *testing.T) {
	evs := realisticRun(t, 0)
	snap, err := MakeSnapshot(evs, 4)
	require.NoError(t, err)
	dir, _ := writeBoth(t, &Bundle{Metadata: testMeta(), Events: evs, Snapshot: snap})
	// Forge a snapshot with another band, re-sealing manifest digests.
	forged := editDir(t, dir, func(d string) {
		s := *snap
		s.State = *snap.State.Clone()
		s.State.Band = "reject"
		b, err := events.Canonical(s)
		require.NoError(t, err)
		require.NoError(t, writeFileBytes(filepath.Join(d, SnapshotFile), b))
		rewriteManifest(t, d, func(m *Manifest) {
			for i := range m.Files {
				if m.Files[i].Path == SnapshotFile {
					m.Files[i].Size, m.Files[i].Digest = int64(len(b)), events.Sum(b)
				}
			}
		})
	})
	_, err = Verify(context.Background(), forged)
	require.ErrorIs(t, err, ErrDigest)
	var be *BundleError
	require.ErrorAs(t, err, &be)
	require.Equal(t, SnapshotFile, be.File)
	require.Equal(t, 3, be.Record)
}

func TestPropertyMerge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		evs := genTape().Draw(t, "tape")
		// Split the tape into overlapping shards, shuffled.
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
		perm := rapid.Permutation(shards).Draw(t, "order")
		m, err := Merge(perm...)
		if err != nil {
			t.Fatalf("merge: %v", err)
		}
		if events.Chain(m) != events.Chain(evs) {
			t.Fatalf("merge changed the tape:\n%v", pretty.Diff(evs, m))
		}
		again, err := Merge(m, m)
		if err != nil || events.Chain(again) != events.Chain(m) {
			t.Fatalf("merge is not idempotent: %v", err)
		}
		again, err = Merge(append(perm, m)...)
		if err != nil || events.Chain(again) != events.Chain(m) {
			t.Fatalf("merging the result back changes it: %v", err)
		}
	})
}

func TestMergeConflictNamesBoth(t *testing.T) {
	a := realisticRun(t, 0)
	b := cloneEvents(a)
	b[6].Payload = []byte(`{"text":"other"}`)
	b[6].PayloadDigest = events.Sum(b[6].Payload)
	_, err := Merge(a, b)
	require.ErrorIs(t, err, ErrConflict)
	require.Contains(t, err.Error(), "seq 7")
	require.Contains(t, err.Error(), "input 0 event 6")
	require.Contains(t, err.Error(), "input 1 event 6")
}
