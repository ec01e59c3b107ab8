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
