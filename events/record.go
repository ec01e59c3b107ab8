package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"lukechampine.com/blake3"
)

// ErrCorruptRecord is wrapped by every error of a record that is not in the
// canonical encoding.
var ErrCorruptRecord = errors.New("corrupt event record")

// ErrRecordLimit is wrapped by the error of a record whose field is longer
// than its RecordLimits allow.
var ErrRecordLimit = errors.New("event record field too long")

// AppendRecord appends the canonical binary record of e to dst (see the
// package documentation) and returns the extended slice.
func AppendRecord(dst []byte, e Event) []byte {
	dst = appendUntil(dst, e)
	dst = binary.AppendUvarint(dst, uint64(len(e.Payload)))
	dst = append(dst, e.Payload...)
	return appendAfter(dst, e)
}

// AppendHeader appends e's header record, its record with the payload
// elided (an empty payload), which is what the chain hashes: the payload
// is bound through PayloadDigest.
func AppendHeader(dst []byte, e Event) []byte {
	dst = appendUntil(dst, e)
	dst = append(dst, 0)
	return appendAfter(dst, e)
}

func appendUntil(dst []byte, e Event) []byte {
	dst = binary.AppendUvarint(dst, e.Seq)
	dst = binary.AppendUvarint(dst, e.Parent)
	dst = appendString(dst, string(e.Kind))
	return appendString(dst, e.Lane)
}

func appendAfter(dst []byte, e Event) []byte {
	dst = append(dst, e.PayloadDigest[:]...)
	if e.EmittedAt.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, e.EmittedAt.UnixNano())
	}
	return appendString(dst, e.AuditEventID)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// RecordLimits bounds the fields ParseRecord accepts. A zero field means no
// bound beyond the record's own length.
type RecordLimits struct {
	MaxString  int // kind, lane and audit ID
	MaxPayload int
}

// Record is one record decoded in place: its byte fields alias the record,
// and decoding it allocates nothing.
type Record struct {
	Seq, Parent   uint64
	Kind, Lane    []byte
	Payload       []byte
	PayloadDigest Digest
	HasTime       bool
	EmittedAt     int64 // UnixNano, when HasTime
	AuditEventID  []byte
	// payStart and payEnd delimit the payload field (its length varint
	// and its bytes) in the record.
	payStart, payEnd int
}

// ParseRecord decodes the record at the front of b into r and returns its
// length. It accepts exactly the canonical encoding (AppendRecord): minimal
// varints, an emitted flag of 0 or 1; every error wraps ErrCorruptRecord
// and names the field and its byte offset, or wraps ErrRecordLimit for a
// field longer than lim allows. It checks the encoding, not the meaning:
// that PayloadDigest matches Payload is the caller's check (Event.Verify).
func ParseRecord(b []byte, r *Record, lim RecordLimits) (int, error) {
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

// Event returns the event r holds. Payload aliases the record; the strings
// are copies.
func (r *Record) Event() Event { return r.event(Kind(r.Kind)) }

// EventInterned is Event with the Kind taken from in, so that decoding a
// long tape allocates each distinct kind once.
func (r *Record) EventInterned(in *Interner) Event { return r.event(in.Kind(r.Kind)) }

func (r *Record) event(k Kind) Event {
	e := Event{
		Seq: r.Seq, Parent: r.Parent, Kind: k, Lane: string(r.Lane),
		Payload: r.Payload, PayloadDigest: r.PayloadDigest, AuditEventID: string(r.AuditEventID),
	}
	if r.HasTime {
		e.EmittedAt = time.Unix(0, r.EmittedAt).UTC()
	}
	return e
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

// Interner hands out one Kind per distinct kind, for at most a few hundred
// kinds (past that it allocates like Record.Event). The zero value is ready
// to use; it is not safe for concurrent use.
type Interner struct{ m map[string]Kind }

const maxInterned = 256

// Kind returns the Kind spelled by b.
func (in *Interner) Kind(b []byte) Kind {
	if k, ok := in.m[string(b)]; ok {
		return k
	}
	k := Kind(b)
	if in.m == nil {
		in.m = map[string]Kind{}
	}
	if len(in.m) < maxInterned {
		in.m[string(k)] = k
	}
	return k
}

// DecodeRecord decodes the record at the front of b (ParseRecord without
// limits) and returns the event and the record's length. Payload aliases
// b.
func DecodeRecord(b []byte) (Event, int, error) {
	var r Record
	n, err := ParseRecord(b, &r, RecordLimits{})
	if err != nil {
		return Event{}, 0, err
	}
	return r.Event(), n, nil
}

type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(field, msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: field %s at byte %d: %s", ErrCorruptRecord, field, d.off, msg)
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
	case n != uvarintLen(v):
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
	case n != uvarintLen(uint64(v)<<1^uint64(v>>63)):
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
		d.err = fmt.Errorf("%w: field %s at byte %d: length %d, at most %d", ErrRecordLimit, field, d.off, n, max)
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail(field, fmt.Sprintf("length %d exceeds the %d bytes left", n, len(d.b)-d.off))
		return nil
	}
	return d.fixed(field, int(n))
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// Verify checks what a single event must satisfy on its own: a non-empty
// Kind, Seq > 0, Parent < Seq, and a PayloadDigest that matches Payload.
func (e Event) Verify() error {
	switch {
	case e.Seq == 0:
		return fmt.Errorf("event: seq 0 (seqs start at 1)")
	case e.Kind == "":
		return fmt.Errorf("event seq %d: empty kind", e.Seq)
	case e.Parent >= e.Seq:
		return fmt.Errorf("event seq %d: parent %d does not come before it", e.Seq, e.Parent)
	case Sum(e.Payload) != e.PayloadDigest:
		return fmt.Errorf("event seq %d (%s): payload digest %s does not match payload (%s)", e.Seq, e.Kind, e.PayloadDigest, Sum(e.Payload))
	}
	return nil
}

// Chainer computes the chain digest incrementally. The zero value is ready
// to use and starts from h0.
type Chainer struct {
	h      Digest
	buf    []byte
	n      int
	hasher *blake3.Hasher
}

// Add folds e, exactly as given, into the chain and returns the new head.
// The payload itself is left out of the hashed record (see the package
// documentation); PayloadDigest stands for it.
func (c *Chainer) Add(e Event) Digest {
	c.buf = AppendHeader(c.buf[:0], e)
	return c.AddRecord(c.buf)
}

// AddRecord folds an already encoded header record (AppendHeader) into the
// chain.
func (c *Chainer) AddRecord(rec []byte) Digest {
	if c.hasher == nil {
		c.hasher = blake3.New(32, nil)
	} else {
		c.hasher.Reset()
	}
	c.hasher.Write(c.h[:])
	c.hasher.Write(rec)
	c.hasher.Sum(c.h[:0])
	c.n++
	return c.h
}

// Head returns the current chain head (h0 before any Add).
func (c *Chainer) Head() Digest { return c.h }

// Len returns the number of events folded in.
func (c *Chainer) Len() int { return c.n }

// Chain returns the chain digest of evs exactly as given.
func Chain(evs []Event) Digest {
	var c Chainer
	for _, e := range evs {
		c.Add(e)
	}
	return c.Head()
}

// ChainDigest returns the chain digest of evs with the nondeterministic
// fields stripped: one digest per run.
func ChainDigest(evs []Event) Digest { return ChainStripped(evs, Nondeterministic) }

// ChainStripped returns the chain digest of evs with the fields in fs
// stripped from each event.
func ChainStripped(evs []Event, fs Field) Digest {
	var c Chainer
	for _, e := range evs {
		c.Add(e.Strip(fs))
	}
	return c.Head()
}
