package jsondiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/codegenie/codegenie/internal/canonjson"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// LongString is the length above which a differing string is shown as its
// first differing offset and an excerpt of each side rather than whole.
const LongString = 120

// Lines decodes two JSON documents and lists where they differ, one line
// per differing leaf. Each line starts with the location (["key"][index]...,
// or "(root)" for the whole value) followed by both values as canonical
// JSON, "a != b"; a key only one side has shows "(missing)" on the other.
// It returns nil when either document is not JSON or they are equal.
func Lines(a, b []byte) []string {
	var out []string
	walkDocs(a, b, func(loc string, x, y any, inA, inB bool) {
		out = append(out, line(loc, x, y, inA, inB))
	}, func(loc string, la, lb int) {
		out = append(out, fmt.Sprintf("%s: length %d != %d", loc, la, lb))
	})
	return out
}

// line renders one differing leaf as Lines does.
func line(loc string, x, y any, inA, inB bool) string {
	switch {
	case !inB:
		return fmt.Sprintf("%s: %s != (missing)", loc, render(x))
	case !inA:
		return fmt.Sprintf("%s: (missing) != %s", loc, render(y))
	}
	if s, ok := x.(string); ok {
		if t, ok := y.(string); ok && (len(s) > LongString || len(t) > LongString) {
			off, _ := excerpt.FirstDiff([]byte(s), []byte(t))
			return fmt.Sprintf("%s: strings differ at byte %d (len %d != %d): %q != %q",
				loc, off, len(s), len(t),
				excerpt.Around([]byte(s), off, excerpt.Radius), excerpt.Around([]byte(t), off, excerpt.Radius))
		}
	}
	return loc + ": " + render(x) + " != " + render(y)
}

// An Edit is one differing leaf of two documents reduced to the change:
// what would turn A's value into B's, whatever surrounds it, so that one
// change made in several documents gives equal edits.
type Edit struct {
	// Path is the location, as Lines writes it.
	Path string
	// A and B are the changed part of each side as shown: for two
	// strings, the words that differ (the bytes outside their longest
	// common prefix and suffix, widened to whole words, runs of bytes
	// other than white space, where they start or end inside one), quoted, with
	// "…" where the string goes on; for anything else, the value as
	// canonical JSON, or "(missing)". A part longer than LongString is
	// cut to its start, with its length.
	A, B string
	// Key is Path and both changed parts in full: equal for two edits
	// exactly when they make the same change.
	Key string
}

// Edits lists where two JSON documents differ as Lines does, one Edit per
// differing leaf (an array's length is told by its missing elements). It
// returns nil when either document is not JSON or they are equal.
func Edits(a, b []byte) []Edit {
	var out []Edit
	walkDocs(a, b, func(loc string, x, y any, inA, inB bool) {
		s, sok := x.(string)
		t, tok := y.(string)
		if inA && inB && sok && tok {
			out = append(out, StringEdit(loc, s, t))
			return
		}
		e := Edit{Path: loc, A: "(missing)", B: "(missing)"}
		if inA {
			e.A = render(x)
		}
		if inB {
			e.B = render(y)
		}
		e.Key = keyOf(loc, e.A, e.B)
		out = append(out, e)
	}, func(string, int, int) {})
	return out
}

// StringEdit is the Edit of two strings at loc (see Edit).
func StringEdit(loc, a, b string) Edit {
	p, s := commonEnds(a, b)
	// Widen a change that starts or ends inside a word to the whole word:
	// the bytes on either side of the change are shared, so both sides
	// widen alike. A change that starts or ends at white space keeps its
	// neighbours out, so the same words inserted after different words
	// are one edit.
	if p > 0 && wordByte(a[p-1]) && (p < len(a)-s && wordByte(a[p]) || p < len(b)-s && wordByte(b[p])) {
		for p > 0 && wordByte(a[p-1]) {
			p--
		}
	}
	if s > 0 && wordByte(a[len(a)-s]) && (len(a)-s > p && wordByte(a[len(a)-s-1]) || len(b)-s > p && wordByte(b[len(b)-s-1])) {
		for s > 0 && wordByte(a[len(a)-s]) {
			s--
		}
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	return Edit{Path: loc, A: shown(ma, p > 0, s > 0), B: shown(mb, p > 0, s > 0), Key: keyOf(loc, strconv.Quote(ma), strconv.Quote(mb))}
}

// commonEnds returns the lengths of the longest common prefix of a and b
// and of the longest common suffix of what remains.
func commonEnds(a, b string) (prefix, suffix int) {
	n := min(len(a), len(b))
	for prefix < n && a[prefix] == b[prefix] {
		prefix++
	}
	for suffix < n-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	return prefix, suffix
}

// wordByte reports whether c belongs to a word: anything but ASCII
// white space, so a word is a whole token (a model name, a number with
// its unit, a word with its punctuation) and a rune is never cut.
func wordByte(c byte) bool {
	return c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v'
}

// shown quotes the changed part m of a string, with "…" on each side the
// string goes on (one for an empty part), cut to LongString bytes.
func shown(m string, before, after bool) string {
	cut := excerpt.Head(m, LongString)
	var b []byte
	if before {
		b = append(b, "…"...)
	}
	b = append(b, cut...)
	if (after || len(cut) < len(m)) && !(before && m == "") {
		b = append(b, "…"...)
	}
	q := strconv.Quote(string(b))
	if len(cut) < len(m) {
		q += fmt.Sprintf(" (%d bytes)", len(m))
	}
	return q
}

func keyOf(loc, a, b string) string { return loc + "\x00" + a + "\x00" + b }

// walkDocs decodes a and b and calls leaf for each differing leaf (a
// value only one side has, or two values that differ and are not both
// objects or both arrays) and length for each pair of arrays of
// different lengths, in a deterministic order. It calls neither when
// either document is not JSON.
func walkDocs(a, b []byte, leaf func(loc string, x, y any, inA, inB bool), length func(loc string, la, lb int)) {
	va, err := decode(a)
	if err != nil {
		return
	}
	vb, err := decode(b)
	if err != nil {
		return
	}
	w := walker{leaf: leaf, length: length}
	w.walk("", va, vb)
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

type walker struct {
	leaf   func(loc string, x, y any, inA, inB bool)
	length func(loc string, la, lb int)
}

func (w walker) walk(path string, a, b any) {
	loc := path
	if loc == "" {
		loc = "(root)"
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			w.walkObject(path, x, y)
			return
		}
	case []any:
		if y, ok := b.([]any); ok {
			w.walkArray(path, loc, x, y)
			return
		}
	}
	if !sameLeaf(a, b) {
		w.leaf(loc, a, b, true, true)
	}
}

func (w walker) walkObject(path string, x, y map[string]any) {
	keys := make([]string, 0, len(x)+len(y))
	for k := range x {
		keys = append(keys, k)
	}
	for k := range y {
		if _, ok := x[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "[" + strconv.Quote(k) + "]"
		va, inA := x[k]
		vb, inB := y[k]
		if inA && inB {
			w.walk(p, va, vb)
		} else {
			w.leaf(p, va, vb, inA, inB)
		}
	}
}

func (w walker) walkArray(path, loc string, x, y []any) {
	for i := range min(len(x), len(y)) {
		w.walk(path+"["+strconv.Itoa(i)+"]", x[i], y[i])
	}
	if len(x) == len(y) {
		return
	}
	w.length(loc, len(x), len(y))
	for i := len(y); i < len(x); i++ {
		w.leaf(fmt.Sprintf("%s[%d]", path, i), x[i], nil, true, false)
	}
	for i := len(x); i < len(y); i++ {
		w.leaf(fmt.Sprintf("%s[%d]", path, i), nil, y[i], false, true)
	}
}

func sameLeaf(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

// render shows one decoded JSON value on a line as canonical JSON, a long
// string cut to an excerpt of its start.
func render(v any) string {
	if s, ok := v.(string); ok && len(s) > LongString {
		return fmt.Sprintf("%q… (len %d)", excerpt.Around([]byte(s), 0, LongString), len(s))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	b, err := canonjson.Append(nil, buf.Bytes())
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
