package events

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/jsondiff"
)

// The names Divergence.Field takes: an Event struct field name, or "Length"
// when one tape is a strict prefix of the other.
const (
	fieldNameSeq           = "Seq"
	fieldNameParent        = "Parent"
	fieldNameKind          = "Kind"
	fieldNameLane          = "Lane"
	fieldNamePayload       = "Payload"
	fieldNamePayloadDigest = "PayloadDigest"
	fieldNameEmittedAt     = "EmittedAt"
	fieldNameAuditEventID  = "AuditEventID"
	fieldNameLength        = "Length"
)

// Divergence is the first difference between two tapes, as data: Text and
// String render it for people, encoding/json renders it for machines. Side
// A is the reference tape (the first argument of Compare).
type Divergence struct {
	// Index is the 0-based position of the first differing event.
	Index int `json:"index"`
	// Kind, Seq, Parent and Lane describe the event at Index in tape A (in
	// tape B when A has no event there).
	Kind   Kind   `json:"kind"`
	Seq    uint64 `json:"seq"`
	Parent uint64 `json:"parent"`
	Lane   string `json:"lane,omitempty"`
	// Field names the first Event field that differs, in the order Kind,
	// Payload, PayloadDigest, Parent, Lane, Seq, EmittedAt, AuditEventID;
	// or "Length" when one tape ends early.
	Field string `json:"field"`
	// ValueA and ValueB render the differing field of each side when it is
	// not the payload (for Length: the event count of each tape).
	ValueA string `json:"value_a,omitempty"`
	ValueB string `json:"value_b,omitempty"`
	// Offset is the first differing payload byte, or -1 when the payloads
	// are equal.
	Offset int `json:"offset"`
	// LenA and LenB are the payload lengths of the two events.
	LenA int `json:"len_a"`
	LenB int `json:"len_b"`
	// ExcerptA and ExcerptB are escaped windows of each payload around
	// Offset, escaped to print on one line.
	ExcerptA string `json:"excerpt_a,omitempty"`
	ExcerptB string `json:"excerpt_b,omitempty"`
	// PayloadDiff lists the differing fields of the two payloads decoded as
	// JSON, one line each: a location (["key"][index]...) followed by both
	// values as canonical JSON. Empty when a payload is not JSON.
	PayloadDiff []string `json:"payload_diff,omitempty"`
	// Chain is the causal chain in tape A from the divergent event back to
	// the root, following Parent; the divergent event comes first.
	Chain []ChainLink `json:"chain"`
	// TapeLenA and TapeLenB are the number of events in each tape.
	TapeLenA int `json:"tape_len_a"`
	TapeLenB int `json:"tape_len_b"`
}

// ChainLink is one event of a causal chain.
type ChainLink struct {
	Seq    uint64 `json:"seq"`
	Parent uint64 `json:"parent"`
	Kind   Kind   `json:"kind"`
	Lane   string `json:"lane,omitempty"`
}

// Compare compares tape a with tape b after stripping the fields in strip
// from every event, and returns the first difference, or nil when the tapes
// are equal. Equal tapes are recognised by their chain digests
// (Chain); unequal ones are scanned linearly. Every field not in strip is
// compared.
func Compare(a, b []Event, strip Field) *Divergence {
	if len(a) == len(b) && Chain(a, strip) == Chain(b, strip) {
		return nil
	}
	return scan(a, b, strip)
}

// scan is Compare without the chain-digest shortcut.
func scan(a, b []Event, strip Field) *Divergence {
	n := min(len(a), len(b))
	for i := range n {
		ea, eb := a[i].Strip(strip), b[i].Strip(strip)
		field, va, vb := firstFieldDiff(ea, eb)
		if field == "" {
			continue
		}
		d := newDivergence(a, b, i, ea)
		d.Field, d.ValueA, d.ValueB = field, va, vb
		d.LenA, d.LenB = len(ea.Payload), len(eb.Payload)
		if off, ok := excerpt.FirstDiff(ea.Payload, eb.Payload); ok {
			d.Offset = off
			d.ExcerptA = excerpt.Around(ea.Payload, off, excerpt.Radius)
			d.ExcerptB = excerpt.Around(eb.Payload, off, excerpt.Radius)
			d.PayloadDiff = jsondiff.Lines(ea.Payload, eb.Payload)
		}
		return d
	}
	if len(a) == len(b) {
		return nil
	}
	var e Event
	if len(a) > n {
		e = a[n]
	} else {
		e = b[n]
	}
	d := newDivergence(a, b, n, e)
	d.Field = fieldNameLength
	d.ValueA = fmt.Sprintf("%d events", len(a))
	d.ValueB = fmt.Sprintf("%d events", len(b))
	return d
}

func newDivergence(a, b []Event, i int, e Event) *Divergence {
	tape := a
	if i >= len(a) {
		tape = b
	}
	return &Divergence{
		Index:    i,
		Kind:     e.Kind,
		Seq:      e.Seq,
		Parent:   e.Parent,
		Lane:     e.Lane,
		Offset:   -1,
		Chain:    causalChain(tape, i),
		TapeLenA: len(a),
		TapeLenB: len(b),
	}
}

// firstFieldDiff returns the name of the first differing field of two
// (already stripped) events and the rendering of each side's value.
func firstFieldDiff(a, b Event) (field, va, vb string) {
	switch {
	case a.Kind != b.Kind:
		return fieldNameKind, excerpt.Quote(string(a.Kind)), excerpt.Quote(string(b.Kind))
	case !bytes.Equal(a.Payload, b.Payload):
		return fieldNamePayload, "", ""
	case a.PayloadDigest != b.PayloadDigest:
		return fieldNamePayloadDigest, a.PayloadDigest.String(), b.PayloadDigest.String()
	case a.Parent != b.Parent:
		return fieldNameParent, strconv.FormatUint(a.Parent, 10), strconv.FormatUint(b.Parent, 10)
	case a.Lane != b.Lane:
		return fieldNameLane, strconv.Quote(a.Lane), strconv.Quote(b.Lane)
	case a.Seq != b.Seq:
		return fieldNameSeq, strconv.FormatUint(a.Seq, 10), strconv.FormatUint(b.Seq, 10)
	case !a.EmittedAt.Equal(b.EmittedAt) || a.EmittedAt.IsZero() != b.EmittedAt.IsZero():
		return fieldNameEmittedAt, a.EmittedAt.String(), b.EmittedAt.String()
	case a.AuditEventID != b.AuditEventID:
		return fieldNameAuditEventID, strconv.Quote(a.AuditEventID), strconv.Quote(b.AuditEventID)
	}
	return "", "", ""
}

// causalChain returns the chain of events in tape from the event at index i
// back to the root, following Parent. It stops at a parent that is missing
// from the tape or does not come before its child, so a malformed tape
// gives a short chain, never a loop.
func causalChain(tape []Event, i int) []ChainLink {
	if i < 0 || i >= len(tape) {
		return nil
	}
	bySeq := func(seq uint64) (int, bool) {
		if seq >= 1 && seq <= uint64(len(tape)) && tape[seq-1].Seq == seq {
			return int(seq - 1), true
		}
		j := slices.IndexFunc(tape, func(e Event) bool { return e.Seq == seq })
		return j, j >= 0
	}
	var chain []ChainLink
	for {
		e := tape[i]
		chain = append(chain, ChainLink{Seq: e.Seq, Parent: e.Parent, Kind: e.Kind, Lane: e.Lane})
		if e.Parent == 0 || e.Parent >= e.Seq {
			return chain
		}
		j, ok := bySeq(e.Parent)
		if !ok {
			return chain
		}
		i = j
	}
}

// String renders d for people; see Text.
func (d *Divergence) String() string {
	var sb strings.Builder
	_ = d.Text(&sb)
	return sb.String()
}

// Text writes a multi-line rendering of d to w: the event, the field, the
// payload offset with excerpts, the field diff and the causal chain.
// Nothing is truncated beyond the documented excerpts.
func (d *Divergence) Text(w io.Writer) error {
	if d == nil {
		_, err := io.WriteString(w, "no divergence\n")
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "first divergent event: index %d, kind %s, seq %d, parent %d", d.Index, excerpt.Quote(string(d.Kind)), d.Seq, d.Parent)
	if d.Lane != "" {
		fmt.Fprintf(&sb, ", lane %q", d.Lane)
	}
	sb.WriteString("\n")
	fmt.Fprintf(&sb, "  differing field: %s\n", d.Field)
	if d.ValueA != "" || d.ValueB != "" {
		fmt.Fprintf(&sb, "    a: %s\n    b: %s\n", d.ValueA, d.ValueB)
	}
	if d.Offset >= 0 {
		fmt.Fprintf(&sb, "  payload: first differing byte at offset %d (len a=%d, len b=%d)\n", d.Offset, d.LenA, d.LenB)
		fmt.Fprintf(&sb, "    a: %s\n    b: %s\n", d.ExcerptA, d.ExcerptB)
	}
	if len(d.PayloadDiff) > 0 {
		sb.WriteString("  payload field diff (a != b):\n")
		for _, l := range d.PayloadDiff {
			fmt.Fprintf(&sb, "    %s\n", l)
		}
	}
	if d.TapeLenA != d.TapeLenB {
		fmt.Fprintf(&sb, "  tape lengths: a=%d events, b=%d events\n", d.TapeLenA, d.TapeLenB)
	}
	if len(d.Chain) > 0 {
		sb.WriteString("  causal chain (event → root):\n")
		for _, c := range d.Chain {
			fmt.Fprintf(&sb, "    seq %d %s", c.Seq, excerpt.Quote(string(c.Kind)))
			if c.Lane != "" {
				fmt.Fprintf(&sb, " (lane %q)", c.Lane)
			}
			if c.Parent != 0 {
				fmt.Fprintf(&sb, " ← parent %d", c.Parent)
			}
			sb.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
