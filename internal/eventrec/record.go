package eventrec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// ErrCorrupt is wrapped by every error of a record that is not in the
// canonical encoding.
var ErrCorrupt = errors.New("corrupt event record")

// ErrLimit is wrapped by the error of a record whose field is longer than
// its Limits allow.
var ErrLimit = errors.New("event record field too long")

// Fields are the fields of one event, as Append encodes them.
type Fields struct {
	Seq, Parent   uint64
	Kind, Lane    string
	Payload       []byte
	PayloadDigest [32]byte
	EmittedAt     time.Time
	AuditEventID  string
}

// Append appends the record of f to dst and returns the extended slice.
func Append(dst []byte, f *Fields) []byte {
	dst = appendUntil(dst, f)
	dst = binary.AppendUvarint(dst, uint64(len(f.Payload)))
	dst = append(dst, f.Payload...)
	return appendAfter(dst, f)
}

// AppendHeader appends the header record of f, its record with an empty
// payload, which is what the chain hashes.
func AppendHeader(dst []byte, f *Fields) []byte {
	dst = appendUntil(dst, f)
	dst = append(dst, 0)
	return appendAfter(dst, f)
}

func appendUntil(dst []byte, f *Fields) []byte {
	dst = binary.AppendUvarint(dst, f.Seq)
	dst = binary.AppendUvarint(dst, f.Parent)
	dst = appendString(dst, f.Kind)
	return appendString(dst, f.Lane)
}

func appendAfter(dst []byte, f *Fields) []byte {
	dst = append(dst, f.PayloadDigest[:]...)
	if f.EmittedAt.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, f.EmittedAt.UnixNano())
	}
	return appendString(dst, f.AuditEventID)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Limits bounds the fields Parse accepts. A zero field means no bound
// beyond the record's own length.
type Limits struct {
	MaxString  int // kind, lane and audit ID
	MaxPayload int
}

// Record is one record decoded in place: its byte fields alias the record,
// and decoding it allocates nothing.
type Record struct {
	Seq, Parent   uint64
	Kind, Lane    []byte
	Payload       []byte
	PayloadDigest [32]byte
	HasTime       bool
	EmittedAt     int64 // UnixNano, when HasTime
	AuditEventID  []byte
	// payStart and payEnd delimit the payload field (its length varint
	// and its bytes) in the record.
	payStart, payEnd int
}

// Parse decodes the record at the front of b into r and returns its
// length. It accepts exactly the canonical encoding (Append): minimal
// varints, an emitted flag of 0 or 1; every error wraps ErrCorrupt and
// names the field and its byte offset, or wraps ErrLimit for a field
// longer than lim allows. It checks the encoding, not the meaning: that
// PayloadDigest matches Payload is the caller's check.
func Parse(b []byte, r *Record, lim Limits) (int, error) {
	d := decoder{b: b}
	r.Seq = d.uvarint("seq")
	r.Parent = d.uvarint("parent")
	r.Kind = d.bytes("kind", lim.MaxString)
	r.Lane = d.bytes("lane", lim.MaxString)
	r.payStart = d.off
	r.Payload = d.bytes("payload", lim.MaxPayload)
	r.payEnd = d.off
	copy(r.PayloadDigest[:], d.fixed("digest", len(r.PayloadDigest)))
	r.HasTime, r.EmittedAt = false, 0
	switch flag := d.fixed("emitted", 1); {
	case flag == nil:
	case flag[0] == 1:
		r.HasTime, r.EmittedAt = true, d.varint("emitted")
	case flag[0] != 0:
		d.fail("emitted", fmt.Sprintf("flag %d is neither 0 (no time) nor 1", flag[0]))
	}
	r.AuditEventID = d.bytes("audit", lim.MaxString)
	if d.err != nil {
		return 0, d.err
	}
	return d.off, nil
}

// Time returns the record's EmittedAt as a time, the zero time when it has
// none.
func (r *Record) Time() time.Time {
	if !r.HasTime {
		return time.Time{}
	}
	return time.Unix(0, r.EmittedAt).UTC()
}

// AppendHeader appends the header record of r (see the package-level
// AppendHeader) to dst; rec is the record r was parsed from.
func (r *Record) AppendHeader(dst, rec []byte) []byte {
	dst = append(dst, rec[:r.payStart]...)
	dst = append(dst, 0)
	return append(dst, rec[r.payEnd:]...)
}

// HeaderOnly reports whether the record's payload field is empty, so that
// the record is its own header record.
func (r *Record) HeaderOnly() bool { return len(r.Payload) == 0 }

// Interner hands out one string per distinct kind, for at most a few
// hundred kinds (past that it allocates each time). The zero value is
// ready to use; it is not safe for concurrent use.
type Interner struct{ m map[string]string }

const maxInterned = 256

// Kind returns the string spelled by b.
func (in *Interner) Kind(b []byte) string {
	if k, ok := in.m[string(b)]; ok {
		return k
	}
	k := string(b)
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < maxInterned {
		in.m[k] = k
	}
	return k
}

type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(field, msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: field %s at byte %d: %s", ErrCorrupt, field, d.off, msg)
	}
}

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n <= 0:
		d.fail(field, "bad varint")
		return 0
	case n != UvarintLen(v):
		d.fail(field, "non-minimal varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint(field string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	switch {
	case n <= 0:
		d.fail(field, "bad varint")
		return 0
	case n != UvarintLen(uint64(v)<<1^uint64(v>>63)):
		d.fail(field, "non-minimal varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) fixed(field string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b)-d.off < n {
		d.fail(field, fmt.Sprintf("need %d bytes, have %d", n, len(d.b)-d.off))
		return nil
	}
	s := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return s
}

func (d *decoder) bytes(field string, max int) []byte {
	n := d.uvarint(field)
	if d.err != nil {
		return nil
	}
	if max > 0 && n > uint64(max) {
		d.err = fmt.Errorf("%w: field %s at byte %d: length %d, at most %d", ErrLimit, field, d.off, n, max)
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail(field, fmt.Sprintf("length %d exceeds the %d bytes left", n, len(d.b)-d.off))
		return nil
	}
	return d.fixed(field, int(n))
}

// UvarintLen returns the length of the minimal uvarint of v.
func UvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
