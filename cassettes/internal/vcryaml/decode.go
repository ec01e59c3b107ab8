package vcryaml

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// Doc is a decoded cassette.
type Doc struct {
	// Interactions are the recorded interactions, in file order; never nil.
	Interactions []*cassette.Interaction
	// Lines holds the 1-based line of each interaction.
	Lines []int
	// Headers holds every header and trailer value of every interaction:
	// per interaction, the request's headers, its trailer, the response's
	// headers, its trailer, each in file order.
	Headers []Header
}

// Header is one header or trailer value with the line it is on.
type Header struct {
	Name, Value string
	Line        int
}

// bail unwinds a decoding that met text outside the subset.
type bail struct{}

func fail() { panic(bail{}) }

// decoder walks text line by line.
type decoder struct {
	s          string
	start, end int // the current line is s[start:end], without its newline
	line       int // 1-based number of the current line
	doc        Doc
	sides      [4][]Header // the interaction being read: request headers, request trailer, response headers, response trailer
}

// Decode decodes text, a go-vcr cassette of format version 2. ok is false
// when text is outside the subset the package documentation describes.
func Decode(text string) (doc *Doc, ok bool) {
	if !valid(text) {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(bail); !is {
				panic(r)
			}
			doc, ok = nil, false
		}
	}()
	d := &decoder{s: text, line: 1}
	d.doc.Interactions = []*cassette.Interaction{}
	d.at(0)
	if l := d.cur(); strings.HasPrefix(l, "---") && strings.TrimRight(l[3:], " ") == "" {
		d.next()
	}
	d.skipBlank()
	if d.eof() || indentOf(d.cur()) != 0 {
		fail()
	}
	version := 0
	var seen uint32
	d.mapping(0, func(key string, _ bool, rest string) {
		switch once(&seen, key, "version", "interactions") {
		case 0:
			version = int(d.integer(rest, 31))
		case 1:
			d.interactions(rest, 0)
		}
	})
	if version != cassette.CassetteFormatV2 {
		fail()
	}
	return &d.doc, true
}

// valid reports whether s holds only characters yaml.v3 reads, none of
// them a carriage return, a byte order mark or a line break other than
// "\n".
func valid(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff || r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
	return true
}

func (d *decoder) at(start int) {
	d.start = start
	if i := strings.IndexByte(d.s[start:], '\n'); i >= 0 {
		d.end = start + i
	} else {
		d.end = len(d.s)
	}
}

func (d *decoder) next() {
	if d.end >= len(d.s) {
		d.start = len(d.s)
		return
	}
	d.line++
	d.at(d.end + 1)
}

func (d *decoder) eof() bool   { return d.start >= len(d.s) }
func (d *decoder) cur() string { return d.s[d.start:d.end] }

func indentOf(l string) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

// skipBlank moves to the next line that holds more than spaces; a comment
// or a tab before the line's first other character is outside the subset.
func (d *decoder) skipBlank() {
	for !d.eof() {
		l := d.cur()
		if k := indentOf(l); k < len(l) {
			if l[k] == '#' || l[k] == '\t' {
				fail()
			}
			return
		}
		d.next()
	}
}

// once returns the index of key in names and records it in seen; a key
// not in names or seen before is outside the subset.
func once(seen *uint32, key string, names ...string) int {
	for i, n := range names {
		if n == key {
			if *seen&(1<<i) != 0 {
				fail()
			}
			*seen |= 1 << i
			return i
		}
	}
	fail()
	return -1
}

// mapping reads a block mapping whose keys are at column col, the first
// on the current line. For each key, value gets the key, whether it is
// plain (not quoted), and the rest of the key's line after the colon and
// its spaces, and consumes the value.
func (d *decoder) mapping(col int, value func(key string, plain bool, rest string)) {
	for first := true; ; first = false {
		if !first {
			d.skipBlank()
			if d.eof() {
				return
			}
			if k := indentOf(d.cur()); k < col {
				return
			} else if k > col {
				fail()
			}
		}
		l := d.cur()[col:]
		key, after, plain := "", "", true
		switch l[0] {
		case '\'':
			key, after = singleQuoted(l)
			plain = false
		case '"':
			key, after = doubleQuoted(l)
			plain = false
		default:
			n := 0
			for n < len(l) && isKeyByte(l[n], n == 0) {
				n++
			}
			key, after = l[:n], l[n:]
		}
		if len(l)-len(after) > 128 || plain && key == "" || after == "" || after[0] != ':' || len(after) > 1 && after[1] != ' ' {
			fail()
		}
		rest := strings.TrimLeft(after[1:], " ")
		if rest != "" && (rest[0] == '#' || rest[0] == '\t') {
			fail()
		}
		value(key, plain, rest)
	}
}

func isKeyByte(c byte, first bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		!first && (c == '_' || c == '.' || c == '-')
}

// isItem reports whether l starts a block sequence entry at column m.
func isItem(l string, m int) bool {
	return len(l) > m && l[m] == '-' && (len(l) == m+1 || l[m+1] == ' ')
}

// sequence reads the block sequence that is the value of a key at column
// col, starting on the next line. For each entry, item gets the column of
// the sequence's dashes and of the entry's content on the current line,
// and consumes the entry.
func (d *decoder) sequence(col int, item func(m, c int)) {
	d.next()
	d.skipBlank()
	if d.eof() {
		fail()
	}
	m := indentOf(d.cur())
	if m < col || !isItem(d.cur(), m) {
		fail()
	}
	for {
		l := d.cur()
		c := m + 1 + indentOf(l[m+1:])
		if c == len(l) {
			fail()
		}
		item(m, c)
		d.skipBlank()
		if d.eof() {
			return
		}
		k := indentOf(d.cur())
		switch {
		case k < m:
			return
		case k > m:
			fail()
		case !isItem(d.cur(), m):
			if m > col {
				fail()
			}
			return // an indentless sequence ends at the next key
		}
	}
}

// empty reports whether rest is the flow collection open+close ("[]" or
// "{}"), which it then consumes; rest must otherwise be empty, with the
// value on the lines below.
func (d *decoder) empty(rest, collection string) bool {
	if strings.TrimRight(rest, " ") == collection {
		d.next()
		return true
	}
	if rest != "" {
		fail()
	}
	return false
}

func (d *decoder) interactions(rest string, col int) {
	if d.empty(rest, "[]") {
		return
	}
	d.sequence(col, func(_, c int) {
		in := &cassette.Interaction{}
		d.doc.Lines = append(d.doc.Lines, d.line)
		var seen uint32
		d.mapping(c, func(key string, _ bool, rest string) {
			switch once(&seen, key, "id", "request", "response") {
			case 0:
				in.ID = int(d.integer(rest, 31))
			case 1:
				d.block(rest, c, func(k int) { d.request(&in.Request, k) })
			case 2:
				d.block(rest, c, func(k int) { d.response(&in.Response, k) })
			}
		})
		for i, s := range d.sides {
			d.doc.Headers = append(d.doc.Headers, s...)
			d.sides[i] = s[:0]
		}
		d.doc.Interactions = append(d.doc.Interactions, in)
	})
}

// block reads the block mapping that is the value of a key at column col,
// starting on the next line, with fields.
func (d *decoder) block(rest string, col int, fields func(k int)) {
	if rest != "" {
		fail()
	}
	d.next()
	d.skipBlank()
	if d.eof() {
		fail()
	}
	k := indentOf(d.cur())
	if k <= col {
		fail()
	}
	fields(k)
}

func (d *decoder) request(r *cassette.Request, col int) {
	var seen uint32
	d.mapping(col, func(key string, _ bool, rest string) {
		switch once(&seen, key, "proto", "proto_major", "proto_minor", "content_length", "transfer_encoding", "trailer",
			"host", "remote_addr", "request_uri", "body", "form", "headers", "url", "method") {
		case 0:
			r.Proto = d.str(rest, col)
		case 1:
			r.ProtoMajor = int(d.integer(rest, 31))
		case 2:
			r.ProtoMinor = int(d.integer(rest, 31))
		case 3:
			r.ContentLength = d.integer(rest, 63)
		case 4:
			r.TransferEncoding = d.strs(rest, col, "", nil)
		case 5:
			r.Trailer = http.Header(d.header(rest, col, &d.sides[1]))
		case 6:
			r.Host = d.str(rest, col)
		case 7:
			r.RemoteAddr = d.str(rest, col)
		case 8:
			r.RequestURI = d.str(rest, col)
		case 9:
			r.Body = d.str(rest, col)
		case 10:
			r.Form = url.Values(d.header(rest, col, nil))
		case 11:
			r.Headers = http.Header(d.header(rest, col, &d.sides[0]))
		case 12:
			r.URL = d.str(rest, col)
		case 13:
			r.Method = d.str(rest, col)
		}
	})
}

func (d *decoder) response(r *cassette.Response, col int) {
	var seen uint32
	d.mapping(col, func(key string, _ bool, rest string) {
		switch once(&seen, key, "proto", "proto_major", "proto_minor", "transfer_encoding", "trailer", "content_length",
			"uncompressed", "body", "headers", "status", "code", "duration") {
		case 0:
			r.Proto = d.str(rest, col)
		case 1:
			r.ProtoMajor = int(d.integer(rest, 31))
		case 2:
			r.ProtoMinor = int(d.integer(rest, 31))
		case 3:
			r.TransferEncoding = d.strs(rest, col, "", nil)
		case 4:
			r.Trailer = http.Header(d.header(rest, col, &d.sides[3]))
		case 5:
			r.ContentLength = d.integer(rest, 63)
		case 6:
			r.Uncompressed = d.boolean(rest)
		case 7:
			r.Body = d.str(rest, col)
		case 8:
			r.Headers = http.Header(d.header(rest, col, &d.sides[2]))
		case 9:
			r.Status = d.str(rest, col)
		case 10:
			r.Code = int(d.integer(rest, 31))
		case 11:
			r.Duration = d.duration(rest)
		}
	})
}

// header reads a map of string lists (a header, trailer or form), appending
// each value to refs when refs is not nil.
func (d *decoder) header(rest string, col int, refs *[]Header) map[string][]string {
	h := map[string][]string{}
	if d.empty(rest, "{}") {
		return h
	}
	d.block(rest, col, func(k int) {
		d.mapping(k, func(key string, plain bool, rest string) {
			if _, dup := h[key]; dup || plain && (key == "null" || key == "Null" || key == "NULL") {
				fail()
			}
			h[key] = d.strs(rest, k, key, refs)
		})
	})
	return h
}

// strs reads a list of strings, appending each to refs, under name, when
// refs is not nil.
func (d *decoder) strs(rest string, col int, name string, refs *[]Header) []string {
	out := []string{}
	if d.empty(rest, "[]") {
		return out
	}
	d.sequence(col, func(m, c int) {
		line := d.line
		v := d.str(d.cur()[c:], m)
		if refs != nil {
			*refs = append(*refs, Header{Name: name, Value: v, Line: line})
		}
		out = append(out, v)
	})
	return out
}

// integer reads a decimal integer that fits in bits bits plus a sign.
func (d *decoder) integer(rest string, bits int) int64 {
	v := plain(rest)
	digits := strings.TrimPrefix(v, "-")
	if digits == "" || digits[0] == '0' && len(digits) > 1 || len(digits) > bits*3/10 {
		fail()
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			fail()
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		fail()
	}
	d.next()
	return n
}

func (d *decoder) boolean(rest string) bool {
	v := plain(rest)
	d.next()
	switch v {
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	}
	fail()
	return false
}

// duration reads a time.Duration as yaml.v3 does: a string (not a number)
// that time.ParseDuration reads.
func (d *decoder) duration(rest string) time.Duration {
	v := d.scalar(rest)
	if rest[0] != '\'' && rest[0] != '"' && !strings.ContainsAny(v, "nsuµμmh") {
		fail() // a plain number is an integer to yaml.v3, not a duration
	}
	t, err := time.ParseDuration(v)
	if err != nil {
		fail()
	}
	d.next()
	return t
}
