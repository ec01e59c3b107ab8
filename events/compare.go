package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The names Divergence.Field takes: an Event struct field name, or "Length"
// when one tape is a strict prefix of the other.
const (
	FieldNameSeq           = "Seq"
	FieldNameParent        = "Parent"
	FieldNameKind          = "Kind"
	FieldNameLane          = "Lane"
	FieldNamePayload       = "Payload"
	FieldNamePayloadDigest = "PayloadDigest"
	FieldNameEmittedAt     = "EmittedAt"
	FieldNameAuditEventID  = "AuditEventID"
	FieldNameBudgetTokenID = "BudgetTokenID"
	FieldNameLength        = "Length"
)

// ExcerptRadius is the number of bytes shown on each side of a differing
// offset in Divergence excerpts.
const ExcerptRadius = 48

// longString is the length above which a differing string inside a payload
// is shown as an excerpt around its first differing byte rather than whole.
const longString = 120

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
	// Payload, PayloadDigest, Parent, Lane, Seq, EmittedAt, AuditEventID,
	// BudgetTokenID; or "Length" when one tape ends early.
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
	// Offset (see Excerpt).
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
// (ChainStripped); unequal ones are scanned linearly. Every field not in
// strip is compared.
func Compare(a, b []Event, strip Field) *Divergence {
	if len(a) == len(b) && ChainStripped(a, strip) == ChainStripped(b, strip) {
		return nil
	}
	return Scan(a, b, strip)
}

// Scan is Compare without the chain-digest shortcut: callers that already
// hold both tapes' chain digests and know they differ call it directly.
func Scan(a, b []Event, strip Field) *Divergence {
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
		if off, ok := FirstByteDiff(ea.Payload, eb.Payload); ok {
			d.Offset = off
			d.ExcerptA = Excerpt(ea.Payload, off, ExcerptRadius)
			d.ExcerptB = Excerpt(eb.Payload, off, ExcerptRadius)
			d.PayloadDiff = PayloadDiff(ea.Payload, eb.Payload)
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
	d.Field = FieldNameLength
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
		Chain:    CausalChain(tape, i),
		TapeLenA: len(a),
		TapeLenB: len(b),
	}
}

// firstFieldDiff returns the name of the first differing field of two
// (already stripped) events and the rendering of each side's value.
func firstFieldDiff(a, b Event) (field, va, vb string) {
	switch {
	case a.Kind != b.Kind:
		return FieldNameKind, string(a.Kind), string(b.Kind)
	case !bytes.Equal(a.Payload, b.Payload):
		return FieldNamePayload, "", ""
	case a.PayloadDigest != b.PayloadDigest:
		return FieldNamePayloadDigest, a.PayloadDigest.String(), b.PayloadDigest.String()
	case a.Parent != b.Parent:
		return FieldNameParent, strconv.FormatUint(a.Parent, 10), strconv.FormatUint(b.Parent, 10)
	case a.Lane != b.Lane:
		return FieldNameLane, strconv.Quote(a.Lane), strconv.Quote(b.Lane)
	case a.Seq != b.Seq:
		return FieldNameSeq, strconv.FormatUint(a.Seq, 10), strconv.FormatUint(b.Seq, 10)
	case !a.EmittedAt.Equal(b.EmittedAt) || a.EmittedAt.IsZero() != b.EmittedAt.IsZero():
		return FieldNameEmittedAt, a.EmittedAt.String(), b.EmittedAt.String()
	case a.AuditEventID != b.AuditEventID:
		return FieldNameAuditEventID, strconv.Quote(a.AuditEventID), strconv.Quote(b.AuditEventID)
	case a.BudgetTokenID != b.BudgetTokenID:
		return FieldNameBudgetTokenID, strconv.Quote(a.BudgetTokenID), strconv.Quote(b.BudgetTokenID)
	}
	return "", "", ""
}

// CausalChain returns the chain of events in tape from the event at index i
// back to the root, following Parent. It stops at a parent that is missing
// from the tape or does not come before its child, so a malformed tape
// gives a short chain, never a loop.
func CausalChain(tape []Event, i int) []ChainLink {
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

// FirstByteDiff returns the offset of the first byte at which a and b
// differ, and ok = false when they are equal. When one is a prefix of the
// other the offset is the length of the shorter.
func FirstByteDiff(a, b []byte) (offset int, ok bool) {
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

// Excerpt returns the bytes of b within radius of offset, escaped so that
// they print on one line: printable UTF-8 is kept, a backslash is doubled,
// \n \r \t are written as such and every other byte as \xNN. An ellipsis
// marks each side that was cut. An offset at or past the end of b gives the
// tail of b followed by "<end>".
func Excerpt(b []byte, offset, radius int) string {
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

// PayloadDiff decodes two JSON payloads and lists where they differ, one
// line per differing leaf, in a deterministic order (object keys sorted).
// Each line starts with the location (["key"][index]...) followed by both
// values as canonical JSON; long strings are shown as the first differing
// offset and an excerpt of each side. It returns nil when either payload is
// not JSON or the decoded values are equal.
//
// It walks the decoded values itself rather than calling kr/pretty.Diff:
// pretty visits map keys in Go map order, so its output would differ from
// run to run, and it renders json.Number as a quoted string.
func PayloadDiff(a, b []byte) []string {
	va, err := decodeJSON(a)
	if err != nil {
		return nil
	}
	vb, err := decodeJSON(b)
	if err != nil {
		return nil
	}
	var out []string
	diffJSON(&out, "", va, vb)
	return out
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func diffJSON(out *[]string, path string, a, b any) {
	loc := path
	if loc == "" {
		loc = "(payload)"
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "[" + strconv.Quote(k) + "]"
			va, inA := x[k]
			vb, inB := y[k]
			switch {
			case !inB:
				*out = append(*out, fmt.Sprintf("%s: %s != (missing)", p, render(va)))
			case !inA:
				*out = append(*out, fmt.Sprintf("%s: (missing) != %s", p, render(vb)))
			default:
				diffJSON(out, p, va, vb)
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(x), len(y)) {
			diffJSON(out, path+"["+strconv.Itoa(i)+"]", x[i], y[i])
		}
		if len(x) != len(y) {
			*out = append(*out, fmt.Sprintf("%s: length %d != %d", loc, len(x), len(y)))
			for i := len(y); i < len(x); i++ {
				*out = append(*out, fmt.Sprintf("%s[%d]: %s != (missing)", path, i, render(x[i])))
			}
			for i := len(x); i < len(y); i++ {
				*out = append(*out, fmt.Sprintf("%s[%d]: (missing) != %s", path, i, render(y[i])))
			}
		}
		return
	case string:
		y, ok := b.(string)
		if !ok {
			break
		}
		if x == y {
			return
		}
		if len(x) > longString || len(y) > longString {
			off, _ := FirstByteDiff([]byte(x), []byte(y))
			*out = append(*out, fmt.Sprintf("%s: strings differ at byte %d (len %d != %d): %q != %q",
				loc, off, len(x), len(y),
				Excerpt([]byte(x), off, ExcerptRadius), Excerpt([]byte(y), off, ExcerptRadius)))
			return
		}
	}
	if sameJSON(a, b) {
		return
	}
	*out = append(*out, loc+": "+render(a)+" != "+render(b))
}

func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

// render shows one decoded JSON value on a line as canonical JSON, long
// strings cut to an excerpt of their start.
func render(v any) string {
	if s, ok := v.(string); ok && len(s) > longString {
		return fmt.Sprintf("%q… (len %d)", Excerpt([]byte(s), 0, longString), len(s))
	}
	var buf []byte
	buf, err := appendCanonical(buf, v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(buf)
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
	fmt.Fprintf(&sb, "first divergent event: index %d, kind %s, seq %d, parent %d", d.Index, d.Kind, d.Seq, d.Parent)
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
			fmt.Fprintf(&sb, "    seq %d %s", c.Seq, c.Kind)
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
