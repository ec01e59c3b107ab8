package events

import (
	"encoding/hex"
	"fmt"
	"time"

	"lukechampine.com/blake3"
)

// Kind names the step an event records. Each pipeline names its own kinds;
// this package defines none.
type Kind string

// Digest is a blake3-256 digest.
type Digest [32]byte

// Sum returns the blake3-256 digest of b.
func Sum(b []byte) Digest { return Digest(blake3.Sum256(b)) }

// String returns the digest as lowercase hex.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// IsZero reports whether d is the zero digest.
func (d Digest) IsZero() bool { return d == Digest{} }

// MarshalText encodes d as lowercase hex.
func (d Digest) MarshalText() ([]byte, error) {
	b := make([]byte, hex.EncodedLen(len(d)))
	hex.Encode(b, d[:])
	return b, nil
}

// UnmarshalText decodes 64 hex digits into d.
func (d *Digest) UnmarshalText(b []byte) error {
	if len(b) != hex.EncodedLen(len(d)) {
		return fmt.Errorf("events: digest must be %d hex digits, got %d", hex.EncodedLen(len(d)), len(b))
	}
	if _, err := hex.Decode(d[:], b); err != nil {
		return fmt.Errorf("events: digest: %w", err)
	}
	return nil
}

// Event is one step of a run. See the package documentation for the meaning
// of each field and which of them are nondeterministic.
type Event struct {
	Seq           uint64
	Parent        uint64
	Kind          Kind
	Lane          string
	Payload       []byte
	PayloadDigest Digest

	// Nondeterministic fields, stripped before comparison.
	EmittedAt    time.Time
	AuditEventID string
}

// Field names one of the nondeterministic fields of Event.
type Field uint8

// The strippable fields. Their names are the Event struct field names.
const (
	fieldEmittedAt Field = 1 << iota
	fieldAuditEventID
)

// Nondeterministic is the set of every strippable field.
const Nondeterministic = fieldEmittedAt | fieldAuditEventID

var fieldNames = []struct {
	f    Field
	name string
}{
	{fieldEmittedAt, "EmittedAt"},
	{fieldAuditEventID, "AuditEventID"},
}

// String returns the Event struct field name of f, or a list joined by "|"
// for a set.
func (f Field) String() string {
	s := ""
	for _, n := range fieldNames {
		if f&n.f != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
		}
	}
	if s == "" {
		return fmt.Sprintf("Field(%d)", uint8(f))
	}
	return s
}

// FieldByName returns the strippable field with the given Event struct field
// name. Only the nondeterministic fields can be stripped; any other name is
// an error, because every other field is always compared.
func FieldByName(name string) (Field, error) {
	for _, n := range fieldNames {
		if n.name == name {
			return n.f, nil
		}
	}
	return 0, fmt.Errorf("events: %q is not a strippable Event field (strippable: EmittedAt, AuditEventID)", name)
}

// Strip returns a copy of e with the fields in fs set to their zero values.
func (e Event) Strip(fs Field) Event {
	if fs&fieldEmittedAt != 0 {
		e.EmittedAt = time.Time{}
	}
	if fs&fieldAuditEventID != 0 {
		e.AuditEventID = ""
	}
	return e
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
