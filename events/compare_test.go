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
func tape(t testing.TB, band string, opts events.Options) []events.Event {
	t.Helper()
	r := events.NewRecorder(opts)
	root, err := r.Emit(0, kindStarted, map[string]any{"scenario": "npm-lodash"})
	require.NoError(t, err)
	q, err := r.Emit(root, kindQueried, map[string]any{"query": "lodash prototype pollution"})
	require.NoError(t, err)
	rk, err := r.Emit(q, kindRanked, map[string]any{"ids": []string{"ex-03", "ex-11"}})
	require.NoError(t, err)
	_, err = r.Emit(rk, kindClassified, map[string]any{"band": band, "score": 0.82, "thresholds": []float64{0.5, 0.8}})
	require.NoError(t, err)
	return r.Events()
}

func TestCompareEqual(t *testing.T) {
	n := 0
	opts := events.Options{
		Clock: func() time.Time { n++; return time.Unix(int64(n), 0) },
		NewID: func() string { n++; return fmt.Sprint("id-", n) },
	}
	a := tape(t, "accept", opts)
	b := tape(t, "accept", opts)
	require.Nil(t, events.Compare(a, b, events.Nondeterministic))
	// Without stripping, the clock and IDs differ and are reported.
	d := events.Compare(a, b, 0)
	require.NotNil(t, d)
	require.Equal(t, events.FieldNameEmittedAt, d.Field)
	require.Equal(t, 0, d.Index)
	d = events.Compare(a, b, events.FieldEmittedAt)
	require.NotNil(t, d)
	require.Equal(t, events.FieldNameAuditEventID, d.Field)
}

func TestComparePayload(t *testing.T) {
	a := tape(t, "accept", events.Options{})
	b := tape(t, "borderline", events.Options{})
	d := events.Compare(a, b, events.Nondeterministic)
	require.NotNil(t, d)
	require.Equal(t, 3, d.Index)
	require.Equal(t, kindClassified, d.Kind)
	require.Equal(t, uint64(4), d.Seq)
	require.Equal(t, uint64(3), d.Parent)
	require.Equal(t, events.FieldNamePayload, d.Field)
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
	base := tape(t, "accept", events.Options{})
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
		{"kind", mutate(func(e *events.Event) { e.Kind = kindBuilt }), events.FieldNameKind, 2},
		{"parent", mutate(func(e *events.Event) { e.Parent = 1 }), events.FieldNameParent, 2},
		{"lane", mutate(func(e *events.Event) { e.Lane = "x" }), events.FieldNameLane, 2},
		{"seq", mutate(func(e *events.Event) { e.Seq = 9 }), events.FieldNameSeq, 2},
		{"digest", mutate(func(e *events.Event) { e.PayloadDigest[0] ^= 1 }), events.FieldNamePayloadDigest, 2},
		{"shorter", base[:3], events.FieldNameLength, 3},
		{"budget-token-not-stripped", mutate(func(e *events.Event) { e.BudgetTokenID = "tok" }), events.FieldNameBudgetTokenID, 2},
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
		require.Equal(t, events.FieldNameLength, d.Field)
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

func TestFirstByteDiff(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name string
		a, b string
		off  int
		ok   bool
	}{
		{"equal", "abc", "abc", 0, false},
		{"empty", "", "", 0, false},
		{"first", "abc", "xbc", 0, true},
		{"middle", "abc", "abd", 2, true},
		{"prefix", "ab", "abc", 2, true},
		{"long", long + "a" + long, long + "b" + long, 1000, true},
		{"long-prefix", long, long + "z", 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, ok := events.FirstByteDiff([]byte(tt.a), []byte(tt.b))
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.off, off)
		})
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		off, r int
		want   string
	}{
		{"whole", "hello", 2, 10, "hello"},
		{"cut-both", "0123456789", 5, 2, "…3456…"},
		{"escapes", "a\nb\tc\x00\\", 0, 20, `a\nb\tc\x00\\`},
		{"end", "abc", 3, 2, "…bc<end>"},
		{"utf8", "ééééé", 5, 2, "…ééé…"},
		{"invalid-utf8", "a\xffb", 0, 5, `a\xffb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, events.Excerpt([]byte(tt.in), tt.off, tt.r))
		})
	}
}

func TestPayloadDiff(t *testing.T) {
	long := strings.Repeat("p", 300)
	tests := []struct {
		name string
		a, b string
		want []string
	}{
		{"equal", `{"a":1}`, `{"a":1}`, nil},
		{"not-json", `{"a":`, `{"a":1}`, nil},
		{"number", `{"a":1}`, `{"a":2}`, []string{`["a"]: 1 != 2`}},
		{"missing", `{"a":1,"b":true}`, `{"a":1}`, []string{`["b"]: true != (missing)`}},
		{"added", `{"a":1}`, `{"a":1,"c":null}`, []string{`["c"]: (missing) != null`}},
		{"nested-array", `{"x":[1,{"y":"u"}]}`, `{"x":[1,{"y":"v"}]}`, []string{`["x"][1]["y"]: "u" != "v"`}},
		{"array-length", `[1,2]`, `[1]`, []string{`(payload): length 2 != 1`, `[1]: 2 != (missing)`}},
		{"type", `{"a":"1"}`, `{"a":1}`, []string{`["a"]: "1" != 1`}},
		{"long-string", `{"p":"` + long + `a"}`, `{"p":"` + long + `b"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := events.PayloadDiff([]byte(tt.a), []byte(tt.b))
			if tt.name == "long-string" {
				require.Len(t, got, 1)
				require.Contains(t, got[0], `["p"]: strings differ at byte 300 (len 301 != 301)`)
				require.Less(t, len(got[0]), 400, "long strings are excerpted")
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestPayloadDiffDeterministic(t *testing.T) {
	a := []byte(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`)
	b := []byte(`{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0}`)
	first := events.PayloadDiff(a, b)
	require.Len(t, first, 9)
	for range 20 {
		require.Equal(t, first, events.PayloadDiff(a, b))
	}
}

func BenchmarkCompareEqual(b *testing.B) {
	a := tape(b, "accept", events.Options{})
	c := tape(b, "accept", events.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if events.Compare(a, c, events.Nondeterministic) != nil {
			b.Fatal("divergence")
		}
	}
}

func ExampleCompare() {
	emit := func(band string) []events.Event {
		r := events.NewRecorder(events.Options{})
		root, _ := r.Emit(0, kindStarted, map[string]string{"scenario": "npm"})
		_, _ = r.Emit(root, kindClassified, map[string]any{"band": band, "score": 0.7})
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

func ExampleFirstByteDiff() {
	fmt.Println(events.FirstByteDiff([]byte("lodash@4.17.21"), []byte("lodash@4.17.20")))
	fmt.Println(events.FirstByteDiff([]byte("same"), []byte("same")))
	// Output:
	// 13 true
	// 0 false
}

func ExampleExcerpt() {
	fmt.Println(events.Excerpt([]byte("line one\nline two\nline three"), 14, 6))
	// Output: …\nline two\nli…
}

func ExamplePayloadDiff() {
	a := []byte(`{"band":"accept","examples":["ex-1","ex-2"],"score":0.82}`)
	b := []byte(`{"band":"accept","examples":["ex-2","ex-1"],"score":0.82}`)
	for _, l := range events.PayloadDiff(a, b) {
		fmt.Println(l)
	}
	// Output:
	// ["examples"][0]: "ex-1" != "ex-2"
	// ["examples"][1]: "ex-2" != "ex-1"
}

func ExampleCausalChain() {
	r := events.NewRecorder(events.Options{})
	root, _ := r.Emit(0, kindStarted, "run")
	q, _ := r.Emit(root, kindQueried, "q")
	_, _ = r.Emit(root, kindClassified, "unrelated")
	_, _ = r.Emit(q, kindRanked, "r")
	for _, c := range events.CausalChain(r.Events(), 3) {
		fmt.Println(c.Seq, c.Kind)
	}
	// Output:
	// 4 search.ranked
	// 2 search.queried
	// 1 job.started
}

func ExampleScan() {
	// Scan skips the chain-digest check: for callers that already know
	// the tapes' digests differ.
	a := []events.Event{{Seq: 1, Kind: kindStarted, Payload: []byte(`{}`)}}
	b := []events.Event{{Seq: 1, Kind: kindStarted, Payload: []byte(`{}`), AuditEventID: "x"}}
	fmt.Println(events.Scan(a, b, events.Nondeterministic) == nil)
	fmt.Println(events.Scan(a, b, 0).Field)
	// Output:
	// true
	// AuditEventID
}
