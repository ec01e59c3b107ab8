package ledger

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// storable returns s as every store keeps it (see the package
// documentation, Text): each NUL and each byte that is not part of a
// valid UTF-8 encoding becomes U+FFFD; every other byte is kept.
func storable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && n == 1) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// storableEntry returns e with every string made storable, sharing no
// map, slice or pointer with e. Two component names that become the same
// are refused: keeping either would drop the other's value.
func storableEntry(e Entry) (Entry, error) {
	for _, p := range []*string{&e.Kind, &e.Scenario, &e.Path, &e.Key, &e.Verdict, &e.OutputDigest, &e.ChainDigest,
		&e.Revision, &e.CIJob, &e.Evidence, &e.Test, &e.Package, &e.Prev, &e.Hash} {
		*p = storable(*p)
	}
	if e.Components != nil {
		comps := make(map[string]string, len(e.Components))
		for _, k := range slices.Sorted(maps.Keys(e.Components)) {
			v, sk := e.Components[k], storable(k)
			if _, dup := comps[sk]; dup {
				return Entry{}, fmt.Errorf("%w: two component names are the same once NUL and invalid UTF-8 are replaced: %+q", errInvalidEntry, sk)
			}
			comps[sk] = storable(v)
		}
		e.Components = comps
	}
	if e.Classes != nil {
		classes := make([]Class, len(e.Classes))
		for i, c := range e.Classes {
			c.OutputDigest, c.ChainDigest, c.Error = storable(c.OutputDigest), storable(c.ChainDigest), storable(c.Error)
			classes[i] = c
		}
		e.Classes = classes
	}
	if e.Rerun != nil {
		o := *e.Rerun
		o.Status, o.Error = storable(o.Status), storable(o.Error)
		o.Moved, o.Differs = storableAll(o.Moved), storableAll(o.Differs)
		e.Rerun = &o
	}
	if e.Admin != nil {
		a := *e.Admin
		a.Action, a.Boundary, a.Reason = storable(a.Action), storable(a.Boundary), storable(a.Reason)
		e.Admin = &a
	}
	return e, nil
}

func storableAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = storable(s)
	}
	return out
}
