package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Canonical returns the canonical JSON encoding of v described in the
// package documentation. A []byte or json.RawMessage holding JSON is
// re-canonicalised rather than base64-encoded only when passed as
// json.RawMessage.
func Canonical(v any) ([]byte, error) {
	var raw []byte
	if m, ok := v.(json.RawMessage); ok {
		raw = m
	} else {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("events: canonical encoding: %w", err)
		}
		raw = buf.Bytes()
	}
	return CanonicalizeJSON(raw)
}

// CanonicalizeJSON rewrites a JSON document in canonical form.
func CanonicalizeJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("events: canonical encoding: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("events: canonical encoding: trailing data after JSON value")
	}
	out := make([]byte, 0, len(raw))
	return appendCanonical(out, x)
}

func appendCanonical(dst []byte, x any) ([]byte, error) {
	switch v := x.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return appendJSONString(dst, v), nil
	case json.Number:
		return appendNumber(dst, v)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendCanonical(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("events: canonical encoding: unexpected %T", x)
}

func appendNumber(dst []byte, n json.Number) ([]byte, error) {
	s := string(n)
	// Integers that fit exactly are kept as their digits.
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.AppendInt(dst, i, 10), nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return strconv.AppendUint(dst, u, 10), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("events: canonical encoding: number %q is not a finite float64", s)
	}
	// encoding/json's float64 format: shortest round-trip, ES6 exponent rules.
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("events: canonical encoding: %w", err)
	}
	return append(dst, b...), nil
}

func appendJSONString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
