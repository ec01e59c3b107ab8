package events

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/codegenie/codegenie/internal/canonjson"
)

// Canonical returns the canonical JSON encoding of v described in the
// package documentation. A json.RawMessage is canonicalised as it is; any
// other value (a []byte included) is first marshalled with encoding/json.
// A json.RawMessage that is not exactly one JSON value (surrounding
// whitespace aside), nests deeper than 10000 levels or holds a number
// outside the float64 range is an error naming the byte offset.
func Canonical(v any) ([]byte, error) {
	if m, ok := v.(json.RawMessage); ok {
		return canonicalizeJSON(m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("events: canonical encoding: %w", err)
	}
	return canonicalizeJSON(buf.Bytes())
}

// canonicalizeJSON rewrites one JSON document in canonical form (see
// Canonical).
func canonicalizeJSON(raw []byte) ([]byte, error) {
	out, err := canonjson.Append(make([]byte, 0, len(raw)), raw)
	if err != nil {
		return nil, fmt.Errorf("events: canonical encoding: %w", err)
	}
	return out, nil
}
