package cassettes

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/codegenie/codegenie/events"
	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"lukechampine.com/blake3"
)

// digester streams the canonical JSON that defines cassette_id (see
// doc.go) into a blake3 hasher: the bytes events.Canonical makes of every
// go-vcr field, each body replaced by its digest, without building the
// value or its encoding. Object keys are written in their canonical order.
type digester struct {
	h, body *hasher
	buf     []byte   // canonical JSON not yet hashed
	keys    []string // scratch for sorting map keys
}

// digestFlush is how much canonical JSON the digester holds before
// hashing it.
const digestFlush = 4096

// digestOf computes cassette_id as specified in doc.go.
func digestOf(c *cassette.Cassette) events.Digest {
	d := &digester{h: newHasher(), body: newHasher(), buf: make([]byte, 0, 2*digestFlush)}
	d.buf = append(d.buf, `{"Interactions":[`...)
	for i, in := range c.Interactions {
		if i > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = append(d.buf, `{"ID":`...)
		d.buf = strconv.AppendInt(d.buf, int64(in.ID), 10)
		d.buf = append(d.buf, `,"Request":`...)
		d.request(&in.Request)
		d.buf = append(d.buf, `,"Response":`...)
		d.response(&in.Response)
		d.buf = append(d.buf, '}')
		d.flush(false)
	}
	d.buf = append(d.buf, `],"Version":`...)
	d.buf = strconv.AppendInt(d.buf, int64(c.Version), 10)
	d.buf = append(d.buf, '}')
	d.flush(true)
	return d.h.sum()
}

// request writes r with its fields in canonical (byte) order.
func (d *digester) request(r *cassette.Request) {
	d.bodyField(r.Body)
	d.intField("ContentLength", r.ContentLength)
	d.mapField("Form", r.Form)
	d.mapField("Headers", r.Headers)
	d.strField("Host", r.Host)
	d.strField("Method", r.Method)
	d.strField("Proto", r.Proto)
	d.intField("ProtoMajor", int64(r.ProtoMajor))
	d.intField("ProtoMinor", int64(r.ProtoMinor))
	d.strField("RemoteAddr", r.RemoteAddr)
	d.strField("RequestURI", r.RequestURI)
	d.mapField("Trailer", r.Trailer)
	d.listField("TransferEncoding", r.TransferEncoding)
	d.strField("URL", r.URL)
	d.buf = append(d.buf, '}')
}

// response writes r with its fields in canonical (byte) order.
func (d *digester) response(r *cassette.Response) {
	d.bodyField(r.Body)
	d.intField("Code", int64(r.Code))
	d.intField("ContentLength", r.ContentLength)
	d.intField("Duration", int64(r.Duration))
	d.mapField("Headers", r.Headers)
	d.strField("Proto", r.Proto)
	d.intField("ProtoMajor", int64(r.ProtoMajor))
	d.intField("ProtoMinor", int64(r.ProtoMinor))
	d.strField("Status", r.Status)
	d.mapField("Trailer", r.Trailer)
	d.listField("TransferEncoding", r.TransferEncoding)
	d.buf = append(d.buf, `,"Uncompressed":`...)
	d.buf = strconv.AppendBool(d.buf, r.Uncompressed)
	d.buf = append(d.buf, '}')
}

// bodyField opens an object with its first members: "Body" (always empty)
// and "BodyDigest".
func (d *digester) bodyField(body string) {
	d.body.reset()
	d.body.writeString(body)
	sum := d.body.sum()
	d.buf = append(d.buf, `{"Body":"","BodyDigest":"`...)
	d.buf = hex.AppendEncode(d.buf, sum[:])
	d.buf = append(d.buf, '"')
}

func (d *digester) name(n string) {
	d.buf = append(d.buf, ',', '"')
	d.buf = append(d.buf, n...)
	d.buf = append(d.buf, '"', ':')
}

func (d *digester) intField(n string, v int64) {
	d.name(n)
	d.buf = strconv.AppendInt(d.buf, v, 10)
}

func (d *digester) strField(n, v string) {
	d.name(n)
	d.buf = appendJSONString(d.buf, v)
}

func (d *digester) listField(n string, vs []string) {
	d.name(n)
	d.list(vs)
}

func (d *digester) list(vs []string) {
	if vs == nil {
		d.buf = append(d.buf, "null"...)
		return
	}
	d.buf = append(d.buf, '[')
	for i, v := range vs {
		if i > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = appendJSONString(d.buf, v)
		d.flush(false)
	}
	d.buf = append(d.buf, ']')
}

// mapField writes a header, trailer or form as encoding/json and then
// canonicalization write it: keys sorted by their bytes as JSON decodes
// them (an invalid UTF-8 byte as U+FFFD), of keys that decode alike only
// the greatest.
func (d *digester) mapField(n string, m map[string][]string) {
	d.name(n)
	if m == nil {
		d.buf = append(d.buf, "null"...)
		return
	}
	d.keys = d.keys[:0]
	valid := true
	for k := range m {
		d.keys = append(d.keys, k)
		valid = valid && utf8.ValidString(k)
	}
	slices.Sort(d.keys)
	if !valid {
		slices.SortStableFunc(d.keys, func(a, b string) int { return bytes.Compare(decoded(a), decoded(b)) })
		kept := d.keys[:0]
		for i, k := range d.keys {
			if i+1 == len(d.keys) || !bytes.Equal(decoded(k), decoded(d.keys[i+1])) {
				kept = append(kept, k)
			}
		}
		d.keys = kept
	}
	d.buf = append(d.buf, '{')
	for i, k := range d.keys {
		if i > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = appendJSONString(d.buf, k)
		d.buf = append(d.buf, ':')
		d.list(m[k])
	}
	d.buf = append(d.buf, '}')
}

// flush hashes the pending JSON once there is enough of it, or all of it
// when all is set.
func (d *digester) flush(all bool) {
	if all || len(d.buf) >= digestFlush {
		d.h.write(d.buf)
		d.buf = d.buf[:0]
	}
}

// hasher computes blake3-256 digests, fed in pieces of at most blake3's
// chunk size: a larger write makes blake3 hash in goroutines with buffers
// of its own, which for a cassette's small inputs costs more than it saves.
type hasher struct {
	h     *blake3.Hasher
	chunk []byte
}

const hashChunk = 1024

func newHasher() *hasher { return &hasher{h: blake3.New(32, nil), chunk: make([]byte, hashChunk)} }

func (h *hasher) reset() { h.h.Reset() }

func (h *hasher) write(b []byte) {
	for len(b) > 0 {
		n := min(len(b), hashChunk)
		h.h.Write(b[:n])
		b = b[n:]
	}
}

// writeString writes s through the hasher's chunk, without copying s
// whole.
func (h *hasher) writeString(s string) {
	for len(s) > 0 {
		n := copy(h.chunk, s)
		h.h.Write(h.chunk[:n])
		s = s[n:]
	}
}

func (h *hasher) sum() events.Digest {
	var d events.Digest
	h.h.Sum(d[:0])
	return d
}

// decoded is s as a JSON decoder reads it back from its encoding: each
// invalid UTF-8 byte becomes U+FFFD.
func decoded(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		out = utf8.AppendRune(out, r)
	}
	return out
}

// appendJSONString appends s as a JSON string in canonical form: as
// encoding/json escapes it with HTML escaping off, an invalid UTF-8 byte
// written as U+FFFD itself.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\u2028', '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r) // U+FFFD for an invalid byte
		}
		i += size
	}
	return append(dst, '"')
}

// Digest returns the cassette_id of the cassette file at path: the
// blake3-256 digest (hex) of its canonical content, as specified in the
// package documentation. It does not consult the manifest.
func Digest(path string) (string, error) {
	p, err := readCassette(path, "")
	if err != nil {
		return "", err
	}
	return p.digest.String(), nil
}
