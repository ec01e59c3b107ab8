package replay

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/codegenie/codegenie/events"
)

// rec is a parsed view of one canonical record (events.AppendRecord) that
// aliases the record bytes. Parsing allocates nothing.
type rec struct {
	seq, parent uint64
	kind, lane  []byte
	payOff      int // offset of the payload length varint
	payload     []byte
	digest      events.Digest
	tailOff     int // offset of the digest: rec[tailOff:] is digest..budget
	hasTime     bool
	emitted     int64 // UnixNano, when hasTime
	audit       []byte
	budget      []byte
}

// scanRecord parses exactly one record filling b, in the canonical encoding
// only (minimal varints, nothing left over), within the size bounds.
func scanRecord(b []byte, r *rec) error {
	off := 0
	var err error
	uv := func(field string) uint64 {
		if err != nil {
			return 0
		}
		v, n := binary.Uvarint(b[off:])
		if n <= 0 {
			err = fmt.Errorf("%w: field %s at byte %d: bad varint", ErrMalformed, field, off)
			return 0
		}
		if n != uvarintLen(v) {
			err = fmt.Errorf("%w: field %s at byte %d: non-minimal varint", ErrMalformed, field, off)
			return 0
		}
		off += n
		return v
	}
	bs := func(field string, max uint64) []byte {
		n := uv(field)
		if err != nil {
			return nil
		}
		if n > max {
			err = fmt.Errorf("%w: field %s at byte %d: length %d exceeds %d", ErrTooLarge, field, off, n, max)
			return nil
		}
		if n > uint64(len(b)-off) {
			err = fmt.Errorf("%w: field %s at byte %d: length %d exceeds the %d bytes left", ErrMalformed, field, off, n, len(b)-off)
			return nil
		}
		s := b[off : off+int(n) : off+int(n)]
		off += int(n)
		return s
	}
	r.seq = uv("seq")
	r.parent = uv("parent")
	r.kind = bs("kind", MaxString)
	r.lane = bs("lane", MaxString)
	r.payOff = off
	r.payload = bs("payload", MaxRecord)
	if err != nil {
		return err
	}
	if len(b)-off < len(r.digest) {
		return fmt.Errorf("%w: field digest at byte %d: need 32 bytes, have %d", ErrMalformed, off, len(b)-off)
	}
	r.tailOff = off
	copy(r.digest[:], b[off:])
	off += len(r.digest)
	switch {
	case off >= len(b):
		return fmt.Errorf("%w: field emitted at byte %d: need 1 byte, have 0", ErrMalformed, off)
	case b[off] == 0:
		off++
		r.hasTime, r.emitted = false, 0
	case b[off] == 1:
		off++
		v, n := binary.Varint(b[off:])
		if n <= 0 {
			return fmt.Errorf("%w: field emitted at byte %d: bad varint", ErrMalformed, off)
		}
		if n != uvarintLen(uint64(v)<<1^uint64(v>>63)) {
			return fmt.Errorf("%w: field emitted at byte %d: non-minimal varint", ErrMalformed, off)
		}
		off += n
		r.hasTime, r.emitted = true, v
	default:
		return fmt.Errorf("%w: field emitted at byte %d: flag %d is neither 0 (no time) nor 1", ErrMalformed, off, b[off])
	}
	r.audit = bs("audit", MaxString)
	r.budget = bs("budget", MaxString)
	if err != nil {
		return err
	}
	if off != len(b) {
		return fmt.Errorf("%w: %d bytes after the budget field", ErrMalformed, len(b)-off)
	}
	return nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// emptyDigest is the digest of an empty payload. A stored record with an
// empty payload and any other digest refers to blobs/<digest>.
var emptyDigest = events.Sum(nil)

func (r *rec) isBlobRef() bool { return len(r.payload) == 0 && r.digest != emptyDigest }

// knownKinds are the kinds event() returns without allocating.
var knownKinds = [...]events.Kind{
	kindStarted, kindQueried, kindRanked,
	kindClassified, kindBuilt, kindRequested,
	kindResponded, kindProduced, kindFailed,
}

func kindOf(b []byte) events.Kind {
	for _, k := range knownKinds {
		if string(b) == string(k) {
			return k
		}
	}
	return events.Kind(b)
}

// event returns the event scanRecord parsed, exactly what
// events.DecodeRecord returns for the same bytes, so that a validated
// record is parsed once. Payload aliases the record (as DecodeRecord's
// does); the strings are copies.
func (r *rec) event() events.Event {
	e := events.Event{
		Seq: r.seq, Parent: r.parent, Kind: kindOf(r.kind), Lane: string(r.lane),
		Payload: r.payload, PayloadDigest: r.digest,
		AuditEventID: string(r.audit), BudgetTokenID: string(r.budget),
	}
	if r.hasTime {
		e.EmittedAt = time.Unix(0, r.emitted).UTC()
	}
	return e
}
