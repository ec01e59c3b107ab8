package vcryaml

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// str reads a string value: a one-line scalar (consumed with its line) or
// a literal block scalar, in a block collection at column col.
func (d *decoder) str(rest string, col int) string {
	if rest != "" && rest[0] == '|' {
		return d.literal(rest, col)
	}
	v := d.scalar(rest)
	d.next()
	return v
}

// scalar returns the string a one-line scalar stands for, as yaml.v3
// decodes it into a string.
func (d *decoder) scalar(s string) string {
	if s == "" {
		fail()
	}
	var v string
	switch s[0] {
	case '\'':
		v, s = singleQuoted(s)
	case '"':
		v, s = doubleQuoted(s)
	default:
		v = plain(s)
		if v == "~" || v == "null" || v == "Null" || v == "NULL" {
			fail()
		}
		return v
	}
	if strings.TrimRight(s, " ") != "" {
		fail()
	}
	return v
}

// plain returns the plain scalar s, trimmed of trailing spaces.
func plain(s string) string {
	s = strings.TrimRight(s, " ")
	if s == "" || strings.IndexByte(",[]{}#&*!|>'\"%@`", s[0]) >= 0 || strings.IndexByte("-?:", s[0]) >= 0 && (len(s) == 1 || s[1] == ' ') {
		fail()
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") || strings.IndexByte(s, '\t') >= 0 {
		fail()
	}
	return s
}

// singleQuoted returns the value of the single-quoted scalar s starts
// with, and what follows it on the line.
func singleQuoted(s string) (string, string) {
	var b strings.Builder
	from := 1
	for i := 1; ; {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			fail() // not closed on this line
		}
		i += j
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteString(s[from : i+1])
			i += 2
			from = i
			continue
		}
		if from == 1 {
			return s[1:i], s[i+1:]
		}
		b.WriteString(s[from:i])
		return b.String(), s[i+1:]
	}
}

// doubleQuoted returns the value of the double-quoted scalar s starts
// with, and what follows it on the line.
func doubleQuoted(s string) (string, string) {
	j := strings.IndexAny(s[1:], "\"\\")
	if j < 0 {
		fail()
	}
	if s[1+j] == '"' {
		return s[1 : 1+j], s[2+j:]
	}
	b := make([]byte, 0, len(s))
	for i := 1; ; {
		j := strings.IndexAny(s[i:], "\"\\")
		if j < 0 {
			fail()
		}
		b = append(b, s[i:i+j]...)
		i += j
		if s[i] == '"' {
			return string(b), s[i+1:]
		}
		if i+1 == len(s) {
			fail() // an escaped line break
		}
		c := s[i+1]
		i += 2
		if e := escapes[c]; e != "" {
			b = append(b, e...)
			continue
		}
		n := 0
		switch c {
		case 'x':
			n = 2
		case 'u':
			n = 4
		case 'U':
			n = 8
		}
		if n == 0 || i+n > len(s) {
			fail()
		}
		v, err := strconv.ParseUint(s[i:i+n], 16, 32)
		if err != nil || v >= 0xd800 && v <= 0xdfff || v > 0x10ffff {
			fail()
		}
		b = utf8.AppendRune(b, rune(v))
		i += n
	}
}

// escapes are yaml.v3's one-character escapes in double-quoted scalars.
var escapes = [256]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f", 'r': "\r",
	'e': "\x1b", ' ': " ", '"': "\"", '\'': "'", '\\': "\\", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
}

// literal reads a literal block scalar, in a block collection at column
// col, whose header ("|" and its indicators) is rest, on the current line.
func (d *decoder) literal(rest string, col int) string {
	chomp, inc := byte(0), 0
	digit := func(c byte) bool { return c >= '1' && c <= '9' }
	switch h := strings.TrimRight(rest[1:], " "); {
	case h == "":
	case h == "-" || h == "+":
		chomp = h[0]
	case len(h) == 1 && digit(h[0]):
		inc = int(h[0] - '0')
	case len(h) == 2 && digit(h[0]) && (h[1] == '-' || h[1] == '+'):
		inc, chomp = int(h[0]-'0'), h[1]
	case len(h) == 2 && digit(h[1]) && (h[0] == '-' || h[0] == '+'):
		inc, chomp = int(h[1]-'0'), h[0]
	default:
		fail()
	}
	d.next()
	from, leading := d.start, 0
	for !d.eof() && d.start == d.end {
		leading++
		d.next()
	}
	k := indentOf(d.cur())
	if !d.eof() && k == len(d.cur()) {
		fail() // a line of spaces
	}
	indent := col + inc
	if inc == 0 {
		indent = max(k, col+1)
	}
	if !d.eof() && d.cur()[k] == '\t' && (inc == 0 || k < indent) {
		fail() // a tab where yaml.v3 wants indentation
	}
	if d.eof() || k < indent { // no content: the empty lines, when kept
		if chomp == '+' {
			return strings.Repeat("\n", leading)
		}
		return ""
	}
	var b strings.Builder
	b.Grow(blockEnd(d.s, d.start, indent) - from)
	for range leading {
		b.WriteByte('\n')
	}
	for {
		b.WriteString(d.cur()[indent:])
		brk := d.end < len(d.s)
		d.next()
		empty := 0
		for !d.eof() && d.start == d.end {
			empty++
			d.next()
		}
		more := false
		if !d.eof() {
			l := d.cur()
			k := indentOf(l)
			if k == len(l) || k < indent && l[k] == '\t' {
				fail()
			}
			more = k >= indent
		}
		if !more {
			if brk && chomp != '-' {
				b.WriteByte('\n')
			}
			if chomp == '+' {
				for range empty {
					b.WriteByte('\n')
				}
			}
			return b.String()
		}
		for range empty + 1 {
			b.WriteByte('\n')
		}
	}
}

// blockEnd returns the offset in s of the first line from offset i on
// that is neither empty nor indented by at least indent spaces.
func blockEnd(s string, i, indent int) int {
	for i < len(s) {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		if j > 0 && indentOf(s[i:i+min(j, indent)]) < indent {
			return i
		}
		i += j + 1
	}
	return len(s)
}
