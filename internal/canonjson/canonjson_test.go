package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// reference is the canonical form computed the slow, obviously correct way:
// decode with encoding/json into Go values (UseNumber), then write them
// back with sorted keys (without the members whose value is nil, with
// omitNull). Append (AppendOmitNull) must agree with it on every valid
// input.
func reference(raw []byte, omitNull bool) ([]byte, error) {
	if !json.Valid(raw) {
		return nil, errors.New("not one valid JSON value")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return refValue(nil, x, omitNull)
}

func refValue(dst []byte, x any, omitNull bool) ([]byte, error) {
	switch v := x.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
	case json.Number:
		return AppendNumber(dst, string(v))
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = refValue(dst, e, omitNull); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k, e := range v {
			if e != nil || !omitNull {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = refValue(dst, k, omitNull); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
			if dst, err = refValue(dst, v[k], omitNull); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("unexpected %T", x)
}

var seeds = []string{
	`{"b":1,"a":[true,false,null],"c":{"z":"x","y":"w"}}`,
	` {"a" : 1 , "a" : 2} `,
	`"\u00e9\ud83d\ude00\ud800x\u2028\/\b\f\n\r\t\u0001"`,
	"\"\xff\xfe raw \u2029 é\"",
	`[1.0, -0, 1e2, 1E-7, 123456789012345678901234567890, -9223372036854775808, 18446744073709551615, 0.1, 5e-324]`,
	`{"\u0062":1,"a":2,"b":3}`,
	`[]`, `{}`, `[[[]]]`, `"x"`, `0`, `-1.5e+10`,
	`{"é":1,"e":2,"\u00e9":3}`,
	`<html>&amp;`, `{"a":}`, `[1,]`, `1e400`, `"\x"`, `"unterminated`, `{"a" 1}`, `tru`, `01`, `-`, `1.`, `1e`,
	"\"ctl\x01\"", `{} ]`, `{}x`,
	`{"a":null}`, `{"b":null,"a":1}`, `{"a":1,"b":null}`, `{"a":1,"a":null}`, `{"a":null,"a":1}`,
	`[null,{"x":null,"y":[null]},null]`, `null`, `{"o":{"p":null},"q":{"r":{"s":null,"t":0}}}`,
	`{"n": null , "m" : null}`, `{"a":nul}`,
}

func TestAppendAgreesWithReference(t *testing.T) {
	for _, s := range seeds {
		t.Run(s, func(t *testing.T) { checkAgainstReference(t, []byte(s)) })
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstReference)
}

func checkAgainstReference(t *testing.T, raw []byte) {
	for _, omitNull := range []bool{false, true} {
		appendFn := Append
		if omitNull {
			appendFn = AppendOmitNull
		}
		checkAgainst(t, appendFn, raw, omitNull)
	}
}

func checkAgainst(t *testing.T, appendFn func(dst, src []byte) ([]byte, error), raw []byte, omitNull bool) {
	got, err := appendFn(nil, raw)
	want, rerr := reference(raw, omitNull)
	if rerr != nil {
		require.Error(t, err, "Append accepted input the reference rejects (%v): %q -> %q", rerr, raw, got)
		require.ErrorIs(t, err, ErrSyntax)
		return
	}
	require.NoError(t, err, "Append rejected input the reference accepts: %q", raw)
	require.Equal(t, string(want), string(got), "input %q (omitNull %t)", raw, omitNull)
	again, err := appendFn(nil, got)
	require.NoError(t, err)
	require.Equal(t, string(got), string(again), "canonical form is a fixed point")
}

func TestDepthLimit(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	_, err := Append(nil, []byte(deep))
	require.ErrorIs(t, err, ErrSyntax)
	require.Contains(t, err.Error(), "nesting deeper")
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	_, err = Append(nil, []byte(ok))
	require.NoError(t, err)
}

func TestErrorNamesTheOffset(t *testing.T) {
	_, err := Append(nil, []byte(`{"a":1,"b":}`))
	require.ErrorContains(t, err, "at byte 11")
}

// BenchmarkAppendPrompt canonicalises a payload shaped like the fallback
// pipeline's prompt.built event: a few fields and two long multi-line
// strings with escapes and some non-ASCII text.
func BenchmarkAppendPrompt(b *testing.B) {
	raw := promptPayload(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	var out []byte
	var err error
	for b.Loop() {
		out, err = Append(out[:0], raw)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReferencePrompt is the same work done by decoding into Go
// values and encoding them again, as events.Canonical used to.
func BenchmarkReferencePrompt(b *testing.B) {
	raw := promptPayload(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reference(raw, false); err != nil {
			b.Fatal(err)
		}
	}
}

func promptPayload(b *testing.B) []byte {
	line := "import (\n\t\"fmt\"\n)\n// café — naïve \"quoted\" text\\path\n"
	v := map[string]any{
		"system": strings.Repeat("You are a careful engineer.\n", 40),
		"user":   strings.Repeat(line, 200),
		"model":  "claude-x", "max_tokens": 4096, "examples": []string{"ex-1", "ex-2"},
	}
	raw, err := json.Marshal(v)
	require.NoError(b, err)
	return raw
}

// TestOmitNull: a member whose value is null is as absent, at any depth and
// after repeated keys resolve; a null element or a null value that
// replaces another stays, and Append keeps null members.
func TestOmitNull(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"member", `{"model":"m","options":null}`, `{"model":"m"}`},
		{"nested", `{"a":{"b":null,"c":[{"d":null,"e":1}]}}`, `{"a":{"c":[{"e":1}]}}`},
		{"every member", `{"a":null,"b":null}`, `{}`},
		{"last of repeated keys null", `{"a":1,"a":null}`, `{}`},
		{"last of repeated keys not null", `{"a":null,"a":1}`, `{"a":1}`},
		{"array element", `[null,1]`, `[null,1]`},
		{"whole value", `null`, `null`},
		{"string null", `{"a":"null"}`, `{"a":"null"}`},
		{"unsorted", `{"z":1,"n":null,"a":2}`, `{"a":2,"z":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendOmitNull(nil, []byte(tt.in))
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
		})
	}
	kept, err := Append(nil, []byte(`{"b":null,"a":{"c":null}}`))
	require.NoError(t, err)
	require.Equal(t, `{"a":{"c":null},"b":null}`, string(kept), "Append keeps null members")
}
