package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxManifestBytes bounds the manifest read: a manifest holds one entry per
// cassette and one per re-record, so a file near this size is not one.
const maxManifestBytes = 64 << 20

// maxJSONDepth bounds nesting in strictJSON; a manifest nests three deep.
const maxJSONDepth = 64

var errTruncatedJSON = errors.New("unexpected end of file (the file is truncated)")

// jsonLines maps each key of a top-level object whose value is an array to
// the 1-based line where each of the array's elements starts.
type jsonLines map[string][]int

// strictJSON checks that raw holds exactly one JSON value with no duplicate
// object keys, nesting at most maxJSONDepth, and nothing but white space
// after it. On failure it returns the 1-based line of the problem.
func strictJSON(raw []byte) (jsonLines, int, error) {
	lines := jsonLines{}
	topKey := ""
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []*frame
	done := false // the top-level value is complete
	valueDone := func() {
		if n := len(stack); n == 0 {
			done = true
		} else if stack[n-1].keys != nil {
			stack[n-1].expectKey = true
		}
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if done {
			if err == io.EOF {
				return lines, 0, nil
			}
			return nil, lineOfOffset(raw, firstNonSpace(raw, start)), errors.New("trailing data after the JSON document")
		}
		switch {
		case err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF):
			return nil, lineOfOffset(raw, len(raw)), errTruncatedJSON
		case err != nil:
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return nil, lineOfOffset(raw, int(se.Offset)), err
			}
			return nil, lineOfOffset(raw, int(dec.InputOffset())), err
		}
		var top *frame
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		if top != nil && top.expectKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return nil, lineOfOffset(raw, firstNonSpace(raw, start)), fmt.Errorf("duplicate key %q", k)
				}
				top.keys[k] = true
				top.expectKey = false
				if len(stack) == 1 {
					topKey = k
				}
				continue
			}
		}
		if len(stack) == 2 && stack[0].keys != nil && stack[1].keys == nil && tok != json.Delim(']') {
			lines[topKey] = append(lines[topKey], lineOfOffset(raw, firstNonSpace(raw, start)))
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= maxJSONDepth {
				return nil, lineOfOffset(raw, int(start)), fmt.Errorf("nesting deeper than %d", maxJSONDepth)
			}
			f := &frame{}
			if tok == json.Delim('{') {
				f.keys, f.expectKey = map[string]bool{}, true
			}
			stack = append(stack, f)
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// firstNonSpace skips white space and the separators json.Decoder.Token
// consumes silently (',' and ':') from off.
func firstNonSpace(raw []byte, off int64) int {
	i := int(off)
	for i < len(raw) && bytes.IndexByte([]byte(" \t\r\n,:"), raw[i]) >= 0 {
		i++
	}
	return i
}

// lineOfOffset is the 1-based line holding byte off of raw.
func lineOfOffset(raw []byte, off int) int {
	off = min(max(off, 0), len(raw))
	return bytes.Count(raw[:off], []byte("\n")) + 1
}
