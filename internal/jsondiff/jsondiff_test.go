package jsondiff

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLines(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []string
	}{
		{name: "equal", a: `{"a":1}`, b: `{"a":1}`},
		{name: "not json", a: `{"a":`, b: `{"a":1}`},
		{name: "number", a: `{"a":1}`, b: `{"a":2}`, want: []string{`["a"]: 1 != 2`}},
		{name: "missing", a: `{"a":1,"b":true}`, b: `{"a":1}`, want: []string{`["b"]: true != (missing)`}},
		{name: "added", a: `{"a":1}`, b: `{"a":1,"c":null}`, want: []string{`["c"]: (missing) != null`}},
		{name: "nested array", a: `{"x":[1,{"y":"u"}]}`, b: `{"x":[1,{"y":"v"}]}`, want: []string{`["x"][1]["y"]: "u" != "v"`}},
		{name: "array length", a: `[1,2]`, b: `[1]`, want: []string{`(root): length 2 != 1`, `[1]: 2 != (missing)`}},
		{name: "type", a: `{"a":"1"}`, b: `{"a":1}`, want: []string{`["a"]: "1" != 1`}},
		{name: "object rendered canonically", a: `{"a":{"z":1,"y":2}}`, b: `{"a":3}`, want: []string{`["a"]: {"y":2,"z":1} != 3`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Lines([]byte(tt.a), []byte(tt.b)))
		})
	}
}

func TestLinesExcerptsLongStrings(t *testing.T) {
	long := strings.Repeat("p", 300)
	got := Lines([]byte(`{"p":"`+long+`a"}`), []byte(`{"p":"`+long+`b"}`))
	require.Len(t, got, 1)
	require.Contains(t, got[0], `["p"]: strings differ at byte 300 (len 301 != 301)`)
	require.Less(t, len(got[0]), 400, "long strings are excerpted")
}

func TestLinesDeterministic(t *testing.T) {
	a := []byte(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`)
	b := []byte(`{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0}`)
	first := Lines(a, b)
	require.Len(t, first, 9)
	for range 20 {
		require.Equal(t, first, Lines(a, b))
	}
}

func TestEdits(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []Edit
	}{
		{name: "equal", a: `{"a":"x"}`, b: `{"a":"x"}`},
		{name: "not json", a: `{"a":`, b: `{"a":1}`},
		{name: "whole short string", a: `{"p":"alpha"}`, b: `{"p":"alpha, reworded"}`,
			want: []Edit{{Path: `["p"]`, A: `"alpha"`, B: `"alpha, reworded"`, Key: "[\"p\"]\x00\"alpha\"\x00\"alpha, reworded\""}}},
		{name: "a word inside", a: `{"s":"You are a careful reviewer."}`, b: `{"s":"You are a thorough reviewer."}`,
			want: []Edit{{Path: `["s"]`, A: `"…careful…"`, B: `"…thorough…"`, Key: "[\"s\"]\x00\"careful\"\x00\"thorough\""}}},
		{name: "widened to whole words", a: `{"s":"be concise."}`, b: `{"s":"be precise."}`,
			want: []Edit{{Path: `["s"]`, A: `"…concise."`, B: `"…precise."`, Key: "[\"s\"]\x00\"concise.\"\x00\"precise.\""}}},
		{name: "a token whole", a: `{"model":"claude-x"}`, b: `{"model":"claude-y"}`,
			want: []Edit{{Path: `["model"]`, A: `"claude-x"`, B: `"claude-y"`, Key: "[\"model\"]\x00\"claude-x\"\x00\"claude-y\""}}},
		{name: "runes kept whole", a: `{"s":"naïve one"}`, b: `{"s":"naïf one"}`,
			want: []Edit{{Path: `["s"]`, A: `"naïve…"`, B: `"naïf…"`, Key: "[\"s\"]\x00\"naïve\"\x00\"naïf\""}}},
		{name: "not strings", a: `{"n":1,"gone":true}`, b: `{"n":2,"new":[1]}`, want: []Edit{
			{Path: `["gone"]`, A: `true`, B: `(missing)`, Key: "[\"gone\"]\x00true\x00(missing)"},
			{Path: `["n"]`, A: `1`, B: `2`, Key: "[\"n\"]\x001\x002"},
			{Path: `["new"]`, A: `(missing)`, B: `[1]`, Key: "[\"new\"]\x00(missing)\x00[1]"},
		}},
		{name: "array grows", a: `[1]`, b: `[1,2]`, want: []Edit{{Path: `[1]`, A: `(missing)`, B: `2`, Key: "[1]\x00(missing)\x002"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Edits([]byte(tt.a), []byte(tt.b)))
		})
	}
}

// TestEditIsTheChange: one sentence changed in two different prompts is
// one edit; a value that differs is another.
func TestEditIsTheChange(t *testing.T) {
	edit := func(a, b string) Edit {
		es := Edits([]byte(`{"system":"`+a+`"}`), []byte(`{"system":"`+b+`"}`))
		require.Len(t, es, 1)
		return es[0]
	}
	x := edit("Review the style of a.go. Be concise.", "Review the style of a.go. Be brief and concise.")
	y := edit("Review the tests of b_test.go, which are long. Be concise.", "Review the tests of b_test.go, which are long. Be brief and concise.")
	require.Equal(t, x, y)
	require.Equal(t, `"…"`, x.A)
	require.Equal(t, `"…brief and …"`, x.B)
	x, y = edit("alpha", "alpha (be brief)"), edit("beta", "beta (be brief)")
	require.Equal(t, x, y, "the same words appended to different words")
	require.Equal(t, `"… (be brief)"`, x.B)
	require.NotEqual(t, edit("at 10:00:01", "at 10:00:02").Key, edit("at 10:00:01", "at 10:00:03").Key)

	long := strings.Repeat("word ", 60)
	e := StringEdit(`["p"]`, "a", long)
	require.Equal(t, `"`+long[:LongString]+`…" (300 bytes)`, e.B)
	require.Contains(t, e.Key, long, "the key holds the change in full")
}
