package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// kindEvent is an event of kind k at seq with payload p, as a tape holds it.
func kindEvent(seq uint64, k events.Kind, p string) events.Event {
	return events.Event{Seq: seq, Parent: seq - 1, Kind: k, Payload: []byte(p), PayloadDigest: events.Sum([]byte(p))}
}

// TestGenericFold: the generic fold keeps, per kind in the order the kinds
// first appear, the count and the last event's seq, digest and payload;
// its JSON decodes back to the same state, whatever the payloads are; and
// it keeps at most maxFoldKinds kinds apart, counting the rest.
func TestGenericFold(t *testing.T) {
	many := make([]events.Event, maxFoldKinds+3)
	for i := range many {
		many[i] = kindEvent(uint64(i+1), events.Kind(fmt.Sprintf("k%04d", i)), "{}")
	}
	tests := []struct {
		name      string
		evs       []events.Event
		kinds     []events.Kind
		last      kindState // the state of kinds[0]
		other     uint64
		wantBytes bool // the last payload of kinds[0] is encoded as bytes
	}{
		{
			name:  "JSON payloads",
			evs:   []events.Event{kindEvent(1, "b", `{"n":1}`), kindEvent(2, "a", `{}`), kindEvent(3, "b", `{"n":2}`)},
			kinds: []events.Kind{"b", "a"},
			last:  kindState{Kind: "b", Count: 2, LastSeq: 3, Digest: events.Sum([]byte(`{"n":2}`)), Payload: []byte(`{"n":2}`)},
		},
		{
			name:      "a payload that is not JSON",
			evs:       []events.Event{kindEvent(1, "raw", "\xff\x00not json")},
			kinds:     []events.Kind{"raw"},
			last:      kindState{Kind: "raw", Count: 1, LastSeq: 1, Digest: events.Sum([]byte("\xff\x00not json")), Payload: []byte("\xff\x00not json")},
			wantBytes: true,
		},
		{
			name:  "more kinds than the bound",
			evs:   many,
			kinds: nil, // checked by count below
			last:  kindState{Kind: "k0000", Count: 1, LastSeq: 1, Digest: events.Sum([]byte("{}")), Payload: []byte("{}")},
			other: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &kindFold{}
			require.NoError(t, fold(tt.evs, f, nil))
			require.Equal(t, tt.evs[len(tt.evs)-1].Seq, f.At)
			require.Equal(t, uint64(len(tt.evs)), f.Applied)
			require.Equal(t, tt.other, f.Other)
			if tt.kinds != nil {
				var got []events.Kind
				for _, k := range f.Kinds {
					got = append(got, k.Kind)
				}
				require.Equal(t, tt.kinds, got)
			} else {
				require.Len(t, f.Kinds, maxFoldKinds)
			}
			require.Equal(t, tt.last, f.Kinds[0])

			b, err := events.Canonical(f)
			require.NoError(t, err)
			var members struct {
				Kinds []map[string]json.RawMessage `json:"kinds"`
			}
			require.NoError(t, json.Unmarshal(b, &members))
			_, asBytes := members.Kinds[0]["last_payload_bytes"]
			require.Equal(t, tt.wantBytes, asBytes, "%s", b)
			back := &kindFold{}
			require.NoError(t, json.Unmarshal(b, back))
			again, err := events.Canonical(back)
			require.NoError(t, err)
			require.Equal(t, string(b), string(again))
			require.Equal(t, tt.last.Payload, back.Kinds[0].Payload)
		})
	}
}

// namedFold is a test fold that only has a name and counts events.
type namedFold struct {
	name    string
	Applied int `json:"applied"`
}

func (f *namedFold) FoldName() string         { return f.name }
func (f *namedFold) Apply(events.Event) error { f.Applied++; return nil }

// TestFoldToChoosesByName: FoldTo folds through the fold the bundle's
// snapshot names when the caller gave one of that name, else through the
// caller's first fold, and through the generic fold when given none; it
// never uses a fold the caller did not give.
func TestFoldToChoosesByName(t *testing.T) {
	evs := realisticRun(t, 0)
	b := single(evs)
	snap, err := b.Runs[0].Snapshot(evs[1].Seq, &namedFold{name: "test/named/1"})
	require.NoError(t, err)
	b.Snapshot = snap
	withSnap, _ := writeBoth(t, b)
	without, _ := writeBoth(t, single(evs))
	tests := []struct {
		name  string
		path  string
		folds []string
		want  string
	}{
		{"the fold the snapshot names", withSnap, []string{"test/other/1", "test/named/1"}, "test/named/1"},
		{"a name the caller has no fold for", withSnap, []string{"test/other/1", "test/third/1"}, "test/other/1"},
		{"no snapshot", without, []string{"test/other/1", "test/named/1"}, "test/other/1"},
		{"no folds and a snapshot", withSnap, nil, kindFoldName},
		{"no folds", without, nil, kindFoldName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var folds []Folder
			for _, n := range tt.folds {
				folds = append(folds, &namedFold{name: n})
			}
			f, err := Config{}.FoldTo(context.Background(), RunRef{Path: tt.path}, 0, folds...)
			require.NoError(t, err)
			require.Equal(t, tt.want, f.FoldName())
			if nf, ok := f.(*namedFold); ok {
				require.Equal(t, len(evs), nf.Applied)
				require.True(t, slices.ContainsFunc(folds, func(g Folder) bool { return g == f }), "FoldTo returns one of the folds it was given")
			}
		})
	}
}
