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
	va, err := decode(a)
	if err != nil {
		return nil
	}
	vb, err := decode(b)
	if err != nil {
		return nil
	}
	var out []string
	walk(&out, "", va, vb)
	return out
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

func walk(out *[]string, path string, a, b any) {
	loc := path
	if loc == "" {
		loc = "(root)"
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			walkObject(out, path, x, y)
			return
		}
	case []any:
		if y, ok := b.([]any); ok {
			walkArray(out, path, loc, x, y)
			return
		}
	case string:
		y, ok := b.(string)
		if ok && x == y {
			return
		}
		if ok && (len(x) > LongString || len(y) > LongString) {
			off, _ := excerpt.FirstDiff([]byte(x), []byte(y))
			*out = append(*out, fmt.Sprintf("%s: strings differ at byte %d (len %d != %d): %q != %q",
				loc, off, len(x), len(y),
				excerpt.Around([]byte(x), off, excerpt.Radius), excerpt.Around([]byte(y), off, excerpt.Radius)))
			return
		}
	}
	if sameLeaf(a, b) {
		return
	}
	*out = append(*out, loc+": "+render(a)+" != "+render(b))
}

func walkObject(out *[]string, path string, x, y map[string]any) {
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
		switch {
		case !inB:
			*out = append(*out, fmt.Sprintf("%s: %s != (missing)", p, render(va)))
		case !inA:
			*out = append(*out, fmt.Sprintf("%s: (missing) != %s", p, render(vb)))
		default:
			walk(out, p, va, vb)
		}
	}
}

func walkArray(out *[]string, path, loc string, x, y []any) {
	for i := range min(len(x), len(y)) {
		walk(out, path+"["+strconv.Itoa(i)+"]", x[i], y[i])
	}
	if len(x) == len(y) {
		return
	}
	*out = append(*out, fmt.Sprintf("%s: length %d != %d", loc, len(x), len(y)))
	for i := len(y); i < len(x); i++ {
		*out = append(*out, fmt.Sprintf("%s[%d]: %s != (missing)", path, i, render(x[i])))
	}
	for i := len(x); i < len(y); i++ {
		*out = append(*out, fmt.Sprintf("%s[%d]: (missing) != %s", path, i, render(y[i])))
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
