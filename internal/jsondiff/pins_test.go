package jsondiff_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/jsondiff"
)

func TestPinLines(t *testing.T) {
	tests := []struct {
		name string
		a, b map[string]string
		want []string
	}{
		{"equal", map[string]string{"x": "1"}, map[string]string{"x": "1"}, nil},
		{"both-nil", nil, nil, nil},
		{"sorted", map[string]string{"c": "1", "a": "1", "b": "1"}, map[string]string{"c": "2", "a": "2", "b": "2"},
			[]string{`a: "1" != "2"`, `b: "1" != "2"`, `c: "1" != "2"`}},
		{"one-side", map[string]string{"a": "1"}, map[string]string{"b": "2"},
			[]string{`a: "1" != (not pinned)`, `b: (not pinned) != "2"`}},
		{"escapes", map[string]string{"k\x1b": "v\x1b"}, map[string]string{"k\x1b": "w"},
			[]string{`"k\x1b": "v\x1b" != "w"`}},
		{"colon", map[string]string{"a: b": "1"}, nil, []string{`"a: b": "1" != (not pinned)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, jsondiff.PinLines(tt.a, tt.b))
		})
	}
}

// TestPinLinesOrder: many differing names come out in the same order on
// every call, whatever order the maps iterate in.
func TestPinLinesOrder(t *testing.T) {
	a, b := map[string]string{}, map[string]string{}
	for i := range 50 {
		a[fmt.Sprint("pin", i)], b[fmt.Sprint("pin", i)] = "a", "b"
	}
	first := jsondiff.PinLines(a, b)
	for range 20 {
		require.Equal(t, first, jsondiff.PinLines(a, b))
	}
}

func ExamplePinLines() {
	a := map[string]string{"model": "gpt-4o", "cassette_id": "c-1", "prompt": "v3"}
	b := map[string]string{"model": "gpt-4o-mini", "cassette_id": "c-2", "prompt": "v3", "store": "s1"}
	for _, l := range jsondiff.PinLines(a, b) {
		fmt.Println(l)
	}
	// Output:
	// cassette_id: "c-1" != "c-2"
	// model: "gpt-4o" != "gpt-4o-mini"
	// store: (not pinned) != "s1"
}
