package excerpt

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Radius is the number of bytes shown on each side of a differing offset
// in the excerpts of failure messages.
const Radius = 48

// FirstDiff returns the offset of the first byte at which a and b differ,
// and ok = false when they are equal. When one is a prefix of the other the
// offset is the length of the shorter.
func FirstDiff(a, b []byte) (offset int, ok bool) {
	n := min(len(a), len(b))
	// Compare in blocks first: bytes.Equal is vectorised.
	const block = 64
	i := 0
	for ; i+block <= n; i += block {
		if !bytes.Equal(a[i:i+block], b[i:i+block]) {
			break
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return i, true
		}
	}
	if len(a) != len(b) {
		return n, true
	}
	return 0, false
}

// Around returns the bytes of b within radius of offset, escaped so that
// they print on one line: printable UTF-8 is kept, a backslash is doubled,
// \n \r \t are written as such and every other byte as \xNN. An ellipsis
// marks each side that was cut. An offset at or past the end of b gives the
// tail of b followed by "<end>".
func Around(b []byte, offset, radius int) string {
	offset = max(0, min(offset, len(b)))
	lo := max(0, offset-radius)
	hi := min(len(b), offset+radius)
	// Do not cut a UTF-8 sequence in half.
	for lo > 0 && lo < len(b) && !utf8.RuneStart(b[lo]) {
		lo--
	}
	for hi < len(b) && !utf8.RuneStart(b[hi]) {
		hi++
	}
	var sb strings.Builder
	if lo > 0 {
		sb.WriteString("…")
	}
	escapeTo(&sb, b[lo:hi])
	switch {
	case offset >= len(b):
		sb.WriteString("<end>")
	case hi < len(b):
		sb.WriteString("…")
	}
	return sb.String()
}

// Escape returns s escaped as Around escapes an excerpt, whole: it
// prints on one line, and no control character reaches a terminal.
func Escape(s string) string {
	var sb strings.Builder
	escapeTo(&sb, []byte(s))
	return sb.String()
}

func escapeTo(sb *strings.Builder, b []byte) {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == utf8.RuneError && size <= 1, !strconv.IsPrint(r):
			for _, c := range b[:size] {
				fmt.Fprintf(sb, `\x%02x`, c)
			}
		default:
			sb.Write(b[:size])
		}
		b = b[size:]
	}
}

// Head returns at most n bytes of s, cut at a rune boundary. It adds no
// marker: callers that want one append it when len(Head(s, n)) < len(s).
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Quote returns s unchanged when every rune of it is printable (Unicode
// graphic characters and the ASCII space) and it holds no backslash or
// double quote; otherwise it returns s as a Go string literal
// (strconv.Quote), in which control characters, invalid UTF-8 and other
// non-printable runes are escaped. Use it for every string from untrusted
// input that is printed for people, so escape sequences never reach a
// terminal.
func Quote(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || r == '"' || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Indent returns s without its trailing newlines, each line that is not
// empty indented by two spaces.
func Indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}

// Digest returns the first 16 digits of a hex digest, as reports and
// summaries show one, or "-" for none.
func Digest(hex string) string {
	if hex == "" {
		return "-"
	}
	return Head(hex, 16)
}
