package jsondiff

import (
	"fmt"
	"maps"
	"slices"
)

// PinLines lists where two sets of named strings (a run's pins, a
// bundle's metadata) differ: the names whose values differ, sorted by
// name, one line each: `name: "a" != "b"`, with "(not pinned)" for a
// name only one side holds. Values are quoted with Go's escapes, so no
// line holds a raw control byte. Equal sets give no lines.
func PinLines(a, b map[string]string) []string {
	names := slices.Sorted(maps.Keys(a))
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		va, oka := a[n]
		vb, okb := b[n]
		switch {
		case oka && okb && va != vb:
			out = append(out, fmt.Sprintf("%s: %q != %q", pinName(n), va, vb))
		case oka && !okb:
			out = append(out, fmt.Sprintf("%s: %q != (not pinned)", pinName(n), va))
		case !oka && okb:
			out = append(out, fmt.Sprintf("%s: (not pinned) != %q", pinName(n), vb))
		}
	}
	return out
}

// pinName returns n as it is when it is printable without spaces, colons
// or quotes, else quoted.
func pinName(n string) string {
	q := fmt.Sprintf("%q", n)
	if n == "" || q[1:len(q)-1] != n {
		return q
	}
	for _, c := range n {
		if c == ' ' || c == ':' {
			return q
		}
	}
	return n
}
