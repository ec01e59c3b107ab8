package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"lukechampine.com/blake3"
)

// ErrCorruptRecord is wrapped by every DecodeRecord error.
var ErrCorruptRecord = errors.New("corrupt event record")

// AppendRecord appends the canonical binary record of e to dst (see the
// package documentation) and returns the extended slice.
func AppendRecord(dst []byte, e Event) []byte {
	dst = binary.AppendUvarint(dst, e.Seq)
	dst = binary.AppendUvarint(dst, e.Parent)
	dst = appendString(dst, string(e.Kind))
	dst = appendString(dst, e.Lane)
	dst = binary.AppendUvarint(dst, uint64(len(e.Payload)))
	dst = append(dst, e.Payload...)
	dst = append(dst, e.PayloadDigest[:]...)
	if e.EmittedAt.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, e.EmittedAt.UnixNano())
	}
	dst = appendString(dst, e.AuditEventID)
	dst = appendString(dst, e.BudgetTokenID)
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// DecodeRecord decodes one record from the front of b and returns the event
// and the number of bytes read. Payload aliases b. It checks the encoding,
// not the meaning: that PayloadDigest matches Payload is the caller's check
// (see Verify).
func DecodeRecord(b []byte) (Event, int, error) {
	var e Event
	d := decoder{b: b}
	e.Seq = d.uvarint("seq")
	e.Parent = d.uvarint("parent")
	e.Kind = Kind(d.bytes("kind"))
	e.Lane = string(d.bytes("lane"))
	e.Payload = d.bytes("payload")
	copy(e.PayloadDigest[:], d.fixed("digest", len(e.PayloadDigest)))
	switch flag := d.fixed("emitted", 1); {
	case flag == nil:
	case flag[0] == 1:
		if t := d.varint("emitted"); d.err == nil {
			e.EmittedAt = time.Unix(0, t).UTC()
		}
	case flag[0] != 0:
		d.fail("emitted", fmt.Sprintf("flag %d is neither 0 (no time) nor 1", flag[0]))
	}
	e.AuditEventID = string(d.bytes("audit"))
	e.BudgetTokenID = string(d.bytes("budget"))
	if d.err != nil {
		return Event{}, 0, d.err
	}
	return e, d.off, nil
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
	if n <= 0 {
		d.fail(field, "bad varint")
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
	if n <= 0 {
		d.fail(field, "bad varint")
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

func (d *decoder) bytes(field string) []byte {
	n := d.uvarint(field)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail(field, fmt.Sprintf("length %d exceeds the %d bytes left", n, len(d.b)-d.off))
		return nil
	}
	return d.fixed(field, int(n))
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
	e.Payload = nil
	c.buf = AppendRecord(c.buf[:0], e)
	return c.AddRecord(c.buf)
}

// AddRecord folds an already encoded header record (payload omitted) into
// the chain.
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
