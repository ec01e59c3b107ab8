package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted, the same
// limit encoding/json applies.
const MaxDepth = 10000

// ErrSyntax is wrapped by every error for input that is not one JSON value.
var ErrSyntax = errors.New("invalid JSON")

// Append appends the canonical form of the JSON text src to dst. src must
// hold exactly one JSON value, optionally surrounded by whitespace.
func Append(dst, src []byte) ([]byte, error) {
	return appendCanonical(dst, src, false)
}

// AppendOmitNull is Append, except that an object member whose value is
// null is left out, at any depth, as if it were absent: {"a":1,"b":null}
// and {"a":1} have one canonical form. Of repeated keys the last value
// counts, as in Append, so {"a":1,"a":null} is {}. A null that is an array
// element or the whole value is kept: it is not a member.
func AppendOmitNull(dst, src []byte) ([]byte, error) {
	return appendCanonical(dst, src, true)
}

func appendCanonical(dst, src []byte, omitNull bool) ([]byte, error) {
	c := canon{src: src, out: dst, omitNull: omitNull}
	c.space()
	if err := c.value(0); err != nil {
		return nil, err
	}
	c.space()
	if c.pos != len(src) {
		return nil, c.errorf("trailing data after the JSON value")
	}
	return c.out, nil
}

type canon struct {
	src     []byte
	pos     int
	out     []byte
	members []member // the members of the objects being read, innermost last
	// omitNull leaves out object members whose value is null.
	omitNull bool
}

// member is one "key":value pair of an object, already canonical in out.
type member struct {
	key        []byte // decoded key, for ordering
	start, end int    // its bytes in out
	null       bool   // the value is null
}

func (c *canon) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrSyntax, c.pos, fmt.Sprintf(format, args...))
}

func (c *canon) space() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canon) value(depth int) error {
	if c.pos >= len(c.src) {
		return c.errorf("unexpected end of input")
	}
	switch b := c.src[c.pos]; {
	case b == '{':
		return c.object(depth + 1)
	case b == '[':
		return c.array(depth + 1)
	case b == '"':
		_, err := c.str(false)
		return err
	case b == '-' || b >= '0' && b <= '9':
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	default:
		return c.errorf("unexpected %q", b)
	}
}

func (c *canon) literal(lit string) error {
	if !bytes.HasPrefix(c.src[c.pos:], []byte(lit)) {
		return c.errorf("invalid literal")
	}
	c.pos += len(lit)
	c.out = append(c.out, lit...)
	return nil
}

func (c *canon) array(depth int) error {
	if depth > MaxDepth {
		return c.errorf("nesting deeper than %d", MaxDepth)
	}
	c.pos++ // [
	c.out = append(c.out, '[')
	c.space()
	if c.pos < len(c.src) && c.src[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		return nil
	}
	for {
		c.space()
		if err := c.value(depth); err != nil {
			return err
		}
		c.space()
		if c.pos >= len(c.src) {
			return c.errorf("unexpected end of input in an array")
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			return nil
		default:
			return c.errorf("expected , or ] in an array")
		}
	}
}

func (c *canon) object(depth int) error {
	if depth > MaxDepth {
		return c.errorf("nesting deeper than %d", MaxDepth)
	}
	c.pos++ // {
	objStart := len(c.out)
	c.out = append(c.out, '{')
	base := len(c.members)
	defer func() { c.members = c.members[:base] }()
	c.space()
	if c.pos < len(c.src) && c.src[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		return nil
	}
	for {
		c.space()
		if c.pos >= len(c.src) || c.src[c.pos] != '"' {
			return c.errorf("expected a string key in an object")
		}
		start := len(c.out)
		key, err := c.str(true)
		if err != nil {
			return err
		}
		c.space()
		if c.pos >= len(c.src) || c.src[c.pos] != ':' {
			return c.errorf("expected : after an object key")
		}
		c.pos++
		c.out = append(c.out, ':')
		c.space()
		valueStart := len(c.out)
		if err := c.value(depth); err != nil {
			return err
		}
		null := c.omitNull && len(c.out)-valueStart == 4 && string(c.out[valueStart:]) == "null"
		c.members = append(c.members, member{key: key, start: start, end: len(c.out), null: null})
		c.space()
		if c.pos >= len(c.src) {
			return c.errorf("unexpected end of input in an object")
		}
		switch c.src[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case '}':
			c.pos++
			c.out = append(c.out, '}')
			c.order(objStart, c.members[base:])
			return nil
		default:
			return c.errorf("expected , or } in an object")
		}
	}
}

// order rewrites the object that starts at out[objStart] with its members
// sorted by key, keeping the last of repeated keys, and leaving out those
// whose last value is null when c.omitNull is set. Members already in
// strictly ascending order, none null, the common case, are left as
// written.
func (c *canon) order(objStart int, ms []member) {
	sorted := true
	for i := range ms {
		if ms[i].null || i > 0 && bytes.Compare(ms[i-1].key, ms[i].key) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	// Stable, so that of repeated keys the last written stays last.
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	old := bytes.Clone(c.out[objStart:])
	c.out = append(c.out[:objStart], '{')
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && bytes.Equal(m.key, ms[i+1].key) {
			continue // a later value for the same key wins
		}
		if m.null {
			continue
		}
		if !first {
			c.out = append(c.out, ',')
		}
		first = false
		c.out = append(c.out, old[m.start-objStart:m.end-objStart]...)
	}
	c.out = append(c.out, '}')
}

// plain marks the bytes a string copies as they are: printable ASCII
// other than the quote and the backslash.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// short maps the letter of each escape that is its own canonical form to
// the byte it stands for.
var short = [256]byte{'"': '"', '\\': '\\', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// str reads a string token at c.pos and appends its canonical encoding.
// With wantKey it also returns the decoded string.
func (c *canon) str(wantKey bool) ([]byte, error) {
	c.pos++ // "
	start := c.pos
	i := c.pos
	for i < len(c.src) && plain[c.src[i]] {
		i++
	}
	if i < len(c.src) && c.src[i] == '"' {
		// The common case: nothing to unescape or re-escape.
		c.out = append(c.out, c.src[start-1:i+1]...)
		c.pos = i + 1
		return c.src[start:i], nil
	}
	var dec []byte
	if wantKey {
		dec = make([]byte, 0, i-start+8)
	}
	c.out = append(c.out, '"')
	for {
		// Copy the run of plain bytes up to the next special one.
		i := c.pos
		for i < len(c.src) && plain[c.src[i]] {
			i++
		}
		c.out = append(c.out, c.src[c.pos:i]...)
		if wantKey {
			dec = append(dec, c.src[c.pos:i]...)
		}
		c.pos = i
		if c.pos >= len(c.src) {
			return nil, c.errorf("unterminated string")
		}
		switch b := c.src[c.pos]; {
		case b == '"':
			c.pos++
			c.out = append(c.out, '"')
			return dec, nil
		case b < 0x20:
			return nil, c.errorf("control character %#x in a string", b)
		case b == '\\' && c.pos+1 < len(c.src) && short[c.src[c.pos+1]] != 0:
			// \" \\ \b \f \n \r \t are already canonical.
			c.out = append(c.out, b, c.src[c.pos+1])
			if wantKey {
				dec = append(dec, short[c.src[c.pos+1]])
			}
			c.pos += 2
		case b == '\\':
			r, err := c.escape()
			if err != nil {
				return nil, err
			}
			c.out = appendRune(c.out, r)
			if wantKey {
				dec = utf8.AppendRune(dec, r)
			}
		default:
			// Invalid UTF-8 decodes to U+FFFD, as in encoding/json.
			r, size := utf8.DecodeRune(c.src[c.pos:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				c.out = appendRune(c.out, r)
			} else {
				c.out = append(c.out, c.src[c.pos:c.pos+size]...)
			}
			if wantKey {
				dec = utf8.AppendRune(dec, r)
			}
			c.pos += size
		}
	}
}

// escape reads the escape sequence at c.pos and returns the rune it
// stands for. A lone or mismatched surrogate stands for U+FFFD.
func (c *canon) escape() (rune, error) {
	if c.pos+1 >= len(c.src) {
		return 0, c.errorf("unterminated escape")
	}
	e := c.src[c.pos+1]
	c.pos += 2
	switch e {
	case '"', '\\', '/':
		return rune(e), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r := hex4(c.src[c.pos:])
		if r < 0 {
			return 0, c.errorf("invalid \\u escape")
		}
		c.pos += 4
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		if c.pos+6 <= len(c.src) && c.src[c.pos] == '\\' && c.src[c.pos+1] == 'u' {
			if r2 := hex4(c.src[c.pos+2:]); r2 >= 0 {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					c.pos += 6
					return d, nil
				}
			}
		}
		return utf8.RuneError, nil
	}
	return 0, c.errorf("invalid escape \\%c", e)
}

func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, x := range b[:4] {
		switch {
		case '0' <= x && x <= '9':
			x -= '0'
		case 'a' <= x && x <= 'f':
			x = x - 'a' + 10
		case 'A' <= x && x <= 'F':
			x = x - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(x)
	}
	return r
}

const hexDigits = "0123456789abcdef"

// appendRune appends r inside a JSON string as encoding/json writes it with
// HTML escaping off.
func appendRune(dst []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(dst, '\\', byte(r))
	case r == '\b':
		return append(dst, '\\', 'b')
	case r == '\f':
		return append(dst, '\\', 'f')
	case r == '\n':
		return append(dst, '\\', 'n')
	case r == '\r':
		return append(dst, '\\', 'r')
	case r == '\t':
		return append(dst, '\\', 't')
	case r < 0x20:
		return append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	case r == '\u2028' || r == '\u2029':
		return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// number reads a number token at c.pos and appends its canonical form.
func (c *canon) number() error {
	start := c.pos
	i := c.pos
	if c.src[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(c.src) && c.src[i] >= '0' && c.src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(c.src) && c.src[i] == '0':
		i++
	case digits() == 0:
		c.pos = i
		return c.errorf("invalid number")
	}
	integer := true
	if i < len(c.src) && c.src[i] == '.' {
		i++
		integer = false
		if digits() == 0 {
			c.pos = i
			return c.errorf("invalid number: no digits after the decimal point")
		}
	}
	if i < len(c.src) && (c.src[i] == 'e' || c.src[i] == 'E') {
		i++
		integer = false
		if i < len(c.src) && (c.src[i] == '+' || c.src[i] == '-') {
			i++
		}
		if digits() == 0 {
			c.pos = i
			return c.errorf("invalid number: no digits in the exponent")
		}
	}
	tok := c.src[start:i]
	c.pos = i
	// An integer of at most 18 digits fits an int64 and is already in its
	// canonical form, except for negative zero.
	if integer && len(tok) <= 18 && !(len(tok) == 2 && tok[0] == '-' && tok[1] == '0') {
		c.out = append(c.out, tok...)
		return nil
	}
	out, err := AppendNumber(c.out, string(tok))
	if err != nil {
		return err
	}
	c.out = out
	return nil
}

// AppendNumber appends the canonical form of the JSON number s: its exact
// digits when it is an integer that fits an int64 or a uint64, otherwise the
// float64 it rounds to as encoding/json writes a float64 (the shortest
// decimal that round-trips, in the ECMAScript number format), zero of
// either sign as 0. A number outside the float64 range is an error.
func AppendNumber(dst []byte, s string) ([]byte, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.AppendInt(dst, i, 10), nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return strconv.AppendUint(dst, u, 10), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("%w: number %q is not a finite float64", ErrSyntax, s)
	}
	if f == 0 {
		// Negative zero too: "-0" would read back as the integer 0.
		return append(dst, '0'), nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	return append(dst, b...), nil
}
