package events_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// tape records a small linear run whose score.classified payload is band.
func tape(t testing.TB, band string, cfg events.Config) []events.Event {
	t.Helper()
	r := events.NewRecorder(cfg)
	root, err := r.EmitAfter(0, kindStarted, map[string]any{"scenario": "npm-lodash"})
	require.NoError(t, err)
	q, err := r.EmitAfter(root, kindQueried, map[string]any{"query": "lodash prototype pollution"})
	require.NoError(t, err)
	rk, err := r.EmitAfter(q, kindRanked, map[string]any{"ids": []string{"ex-03", "ex-11"}})
	require.NoError(t, err)
	_, err = r.EmitAfter(rk, kindClassified, map[string]any{"band": band, "score": 0.82, "thresholds": []float64{0.5, 0.8}})
	require.NoError(t, err)
	return r.Events()
}

func TestCompareEqual(t *testing.T) {
	n := 0
	opts := events.Config{
		Clock: func() time.Time { n++; return time.Unix(int64(n), 0) },
		NewID: func() string { n++; return fmt.Sprint("id-", n) },
	}
	a := tape(t, "accept", opts)
	b := tape(t, "accept", opts)
	require.Nil(t, events.Compare(a, b, events.Nondeterministic))
	// Without stripping, the clock and IDs differ and are reported.
	d := events.Compare(a, b, 0)
	require.NotNil(t, d)
	require.Equal(t, "EmittedAt", d.Field)
	require.Equal(t, 0, d.Index)
	d = events.Compare(a, b, events.FieldEmittedAt)
	require.NotNil(t, d)
	require.Equal(t, "AuditEventID", d.Field)
}

func TestComparePayload(t *testing.T) {
	a := tape(t, "accept", events.Config{})
	b := tape(t, "borderline", events.Config{})
	d := events.Compare(a, b, events.Nondeterministic)
	require.NotNil(t, d)
	require.Equal(t, 3, d.Index)
	require.Equal(t, kindClassified, d.Kind)
	require.Equal(t, uint64(4), d.Seq)
	require.Equal(t, uint64(3), d.Parent)
	require.Equal(t, "Payload", d.Field)
	off := strings.Index(string(a[3].Payload), "accept")
	require.Equal(t, off, d.Offset)
	require.Equal(t, len(a[3].Payload), d.LenA)
	require.Equal(t, len(b[3].Payload), d.LenB)
	require.Contains(t, d.ExcerptA, `"band":"accept"`)
	require.Contains(t, d.ExcerptB, `"band":"borderline"`)
	require.Equal(t, []string{`["band"]: "accept" != "borderline"`}, d.PayloadDiff)
	require.Equal(t, []events.ChainLink{
		{Seq: 4, Parent: 3, Kind: kindClassified},
		{Seq: 3, Parent: 2, Kind: kindRanked},
		{Seq: 2, Parent: 1, Kind: kindQueried},
		{Seq: 1, Parent: 0, Kind: kindStarted},
	}, d.Chain)

	text := d.String()
	for _, want := range []string{"index 3", "score.classified", "seq 4", "parent 3", "Payload", "offset " + fmt.Sprint(off), `["band"]`, "seq 1 job.started"} {
		require.Contains(t, text, want)
	}
	js, err := json.Marshal(d)
	require.NoError(t, err)
	var back events.Divergence
	require.NoError(t, json.Unmarshal(js, &back))
	require.Equal(t, *d, back)
}

func TestCompareFields(t *testing.T) {
	base := tape(t, "accept", events.Config{})
	mutate := func(f func(e *events.Event)) []events.Event {
		b := append([]events.Event(nil), base...)
		f(&b[2])
		return b
	}
	tests := []struct {
		name  string
		b     []events.Event
		field string
		index int
	}{
		{"kind", mutate(func(e *events.Event) { e.Kind = kindBuilt }), "Kind", 2},
		{"parent", mutate(func(e *events.Event) { e.Parent = 1 }), "Parent", 2},
		{"lane", mutate(func(e *events.Event) { e.Lane = "x" }), "Lane", 2},
		{"seq", mutate(func(e *events.Event) { e.Seq = 9 }), "Seq", 2},
		{"digest", mutate(func(e *events.Event) { e.PayloadDigest[0] ^= 1 }), "PayloadDigest", 2},
		{"shorter", base[:3], "Length", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := events.Compare(base, tt.b, events.FieldEmittedAt|events.FieldAuditEventID)
			require.NotNil(t, d)
			require.Equal(t, tt.field, d.Field)
			require.Equal(t, tt.index, d.Index)
			require.Equal(t, -1, d.Offset)
			require.NotEmpty(t, d.Chain)
			require.NotEmpty(t, d.String())
		})
	}
	t.Run("longer-b", func(t *testing.T) {
		d := events.Compare(base[:2], base, 0)
		require.NotNil(t, d)
		require.Equal(t, "Length", d.Field)
		require.Equal(t, kindRanked, d.Kind) // b's event at index 2
		require.Equal(t, "2 events", d.ValueA)
		require.Equal(t, "4 events", d.ValueB)
	})
}

func TestCausalChainMalformed(t *testing.T) {
	tp := []events.Event{
		{Seq: 1, Kind: kindStarted},
		{Seq: 2, Parent: 7, Kind: kindBuilt},     // missing parent
		{Seq: 3, Parent: 3, Kind: kindRequested}, // self-parent
	}
	require.Len(t, events.CausalChain(tp, 1), 1)
	require.Len(t, events.CausalChain(tp, 2), 1)
	require.Nil(t, events.CausalChain(tp, 5))
}

func BenchmarkCompareEqual(b *testing.B) {
	a := tape(b, "accept", events.Config{})
	c := tape(b, "accept", events.Config{})
	b.ReportAllocs()
	for b.Loop() {
		if events.Compare(a, c, events.Nondeterministic) != nil {
			b.Fatal("divergence")
		}
	}
}

func ExampleCompare() {
	emit := func(band string) []events.Event {
		r := events.NewRecorder(events.Config{})
		root, _ := r.EmitAfter(0, kindStarted, map[string]string{"scenario": "npm"})
		_, _ = r.EmitAfter(root, kindClassified, map[string]any{"band": band, "score": 0.7})
		return r.Events()
	}
	d := events.Compare(emit("accept"), emit("borderline"), events.Nondeterministic)
	fmt.Println(d.Index, d.Kind, d.Field, d.Offset)
	fmt.Println(d.PayloadDiff)
	_ = d.Text(os.Stdout)
	// Output:
	// 1 score.classified Payload 9
	// [["band"]: "accept" != "borderline"]
	// first divergent event: index 1, kind score.classified, seq 2, parent 1
	//   differing field: Payload
	//   payload: first differing byte at offset 9 (len a=29, len b=33)
	//     a: {"band":"accept","score":0.7}
	//     b: {"band":"borderline","score":0.7}
	//   payload field diff (a != b):
	//     ["band"]: "accept" != "borderline"
	//   causal chain (event → root):
	//     seq 2 score.classified ← parent 1
	//     seq 1 job.started
}

func ExampleCausalChain() {
	r := events.NewRecorder(events.Config{})
	root, _ := r.EmitAfter(0, kindStarted, "run")
	q, _ := r.EmitAfter(root, kindQueried, "q")
	_, _ = r.EmitAfter(root, kindClassified, "unrelated")
	_, _ = r.EmitAfter(q, kindRanked, "r")
	for _, c := range events.CausalChain(r.Events(), 3) {
		fmt.Println(c.Seq, c.Kind)
	}
	// Output:
	// 4 search.ranked
	// 2 search.queried
	// 1 job.started
}
