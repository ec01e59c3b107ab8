package ledger

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codegenie/codegenie/events"
)

// errTampered: Verify found an entry that was changed, removed, inserted
// or damaged.
var errTampered = errors.New("ledger: chain does not verify")

// VerifyReport is what Verify found, as data.
type VerifyReport struct {
	Entries int `json:"entries"`
	// First and Head are the first and last seq present; HeadHash the
	// head's hash (keep it elsewhere to detect a cut tail later).
	First    uint64 `json:"first"`
	Head     uint64 `json:"head"`
	HeadHash string `json:"head_hash"`
	// Schemas counts entries per schema version, ascending, for the
	// first 100 versions seen; OtherSchemas counts the entries of
	// any further version.
	Schemas      []SchemaCount `json:"schemas"`
	OtherSchemas int           `json:"other_schemas,omitempty"`
	// Problems make the ledger fail; Warnings do not. Each keeps the first
	// first 100 found, in the order found; MoreProblems and MoreWarnings
	// count the rest. A message is at most 300 bytes.
	Problems     []Problem `json:"problems,omitempty"`
	MoreProblems int       `json:"more_problems,omitempty"`
	Warnings     []Problem `json:"warnings,omitempty"`
	MoreWarnings int       `json:"more_warnings,omitempty"`
}

// Bounds of a VerifyReport, so that memory and output stay bounded
// whatever a ledger holds.
const (
	// maxReported bounds the problems, warnings and schema versions a
	// report keeps.
	maxReported = 100
	// maxMessageBytes bounds one problem's message.
	maxMessageBytes = 300
)

// SchemaCount is how many entries declare one schema version.
type SchemaCount struct {
	Version int `json:"version"`
	Entries int `json:"entries"`
}

// Problem is one finding, located by seq (and by line in the embedded
// store).
type Problem struct {
	Seq     uint64 `json:"seq"`
	Line    int64  `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("seq %d (line %d): %s", p.Seq, p.Line, p.Message)
	}
	return fmt.Sprintf("seq %d: %s", p.Seq, p.Message)
}

// errSeqs is how many problem seqs Err names.
const errSeqs = 10

// Err returns nil when there are no problems, else an error wrapping
// errTampered that names the seq of the first few.
func (r *VerifyReport) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	n := len(r.Problems) + r.MoreProblems
	var seqs []string
	for _, p := range r.Problems[:min(len(r.Problems), errSeqs)] {
		seqs = append(seqs, strconv.FormatUint(p.Seq, 10))
	}
	more := ""
	if n > len(seqs) {
		more = fmt.Sprintf(" and %d more", n-len(seqs))
	}
	return fmt.Errorf("%w: %d problem(s), at seq [%s]%s", errTampered, n, strings.Join(seqs, " "), more)
}

// Text writes the report for people.
func (r *VerifyReport) Text(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d entries, seq %d..%d, head %s\n", r.Entries, r.First, r.Head, r.HeadHash)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "TAMPERED %s\n", p)
	}
	if r.MoreProblems > 0 {
		fmt.Fprintf(&b, "TAMPERED and %d more problems, not listed (the first %d are)\n", r.MoreProblems, len(r.Problems))
	}
	for _, p := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", p)
	}
	if r.MoreWarnings > 0 {
		fmt.Fprintf(&b, "warning: and %d more warnings, not listed (the first %d are)\n", r.MoreWarnings, len(r.Warnings))
	}
	if len(r.Problems) == 0 {
		b.WriteString("chain verifies\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Verify reads every record and checks each entry's schema, its hash
// against its content, the gapless sequence and the chain of hashes, and
// that entries missing from the start were dropped by a recorded
// retention. It returns an error only when the store cannot be read; what it finds
// is in the report (Err). Memory stays bounded whatever the store holds.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	v := verifier{rep: &VerifyReport{}, schemas: map[int]int{}}
	if err := s.Scan(ctx, 0, 0, func(r Record) error { v.record(r); return nil }); err != nil {
		return nil, err
	}
	v.finish()
	return v.rep, nil
}

type verifier struct {
	rep      *VerifyReport
	schemas  map[int]int
	prevSeq  uint64
	prevHash string // "" when the previous record could not be read
	first    Entry
	retain   *Admin
	retainAt uint64
}

func (v *verifier) problem(seq uint64, line int64, format string, args ...any) {
	if len(v.rep.Problems) == maxReported {
		v.rep.MoreProblems++
		return
	}
	v.rep.Problems = append(v.rep.Problems, Problem{Seq: seq, Line: line, Message: clip(fmt.Sprintf(format, args...))})
}

func (v *verifier) warning(seq uint64, line int64, format string, args ...any) {
	if len(v.rep.Warnings) == maxReported {
		v.rep.MoreWarnings++
		return
	}
	v.rep.Warnings = append(v.rep.Warnings, Problem{Seq: seq, Line: line, Message: clip(fmt.Sprintf(format, args...))})
}

// countSchema counts an entry of schema version ver, keeping at most
// maxReported versions.
func (v *verifier) countSchema(ver int) {
	if _, ok := v.schemas[ver]; ok || len(v.schemas) < maxReported {
		v.schemas[ver]++
		return
	}
	v.rep.OtherSchemas++
}

// clip cuts a message to maxMessageBytes, on a rune boundary, marking the
// cut.
func clip(msg string) string {
	if len(msg) <= maxMessageBytes {
		return msg
	}
	const mark = "... (cut)"
	cut := maxMessageBytes - len(mark)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + mark
}

func (v *verifier) record(r Record) {
	want := v.prevSeq + 1
	// Where to report a damaged entry: the store's seq column, or in the
	// embedded store its place in the sequence, since its own seq field
	// may be what was damaged.
	place := cmp.Or(r.Seq, want)
	if r.Line > 0 {
		place = want
		if v.rep.Entries == 0 {
			place = cmp.Or(r.Seq, 1)
		}
	}
	v.rep.Entries++
	e, unknown, err := decodeEntry(r.Body)
	if err != nil {
		v.problem(place, r.Line, "cannot be read: %v", err)
		v.prevSeq, v.prevHash = place, ""
		return
	}
	at := e.Seq
	if !v.intact(r, e, place) {
		at = place
	}
	v.checkColumns(r, e)
	if v.rep.Entries == 1 {
		v.first = e
	} else {
		if e.Seq != want {
			v.problem(at, r.Line, "expected seq %d after %d, the entry says %d: the sequence has a gap or a repeat", want, v.prevSeq, e.Seq)
		}
		if v.prevHash != "" && e.Prev != v.prevHash {
			v.problem(at, r.Line, "prev %s is not the hash of entry %d (%s): one of the two was rewritten", short(e.Prev), v.prevSeq, short(v.prevHash))
		}
	}
	v.countSchema(e.Schema)
	if unknown {
		v.warning(at, r.Line, "schema %d is not known to this version (it knows 1 and %d): its hash, chain and names were checked, its other fields were not", e.Schema, schemaVersion)
		if err := checkNames(e); err != nil {
			v.problem(at, r.Line, "%v", err)
		}
	} else if err := checkFields(e); err != nil {
		v.problem(at, r.Line, "%v", err)
	}
	if e.Kind == kindRerun && e.RerunOf >= e.Seq {
		v.problem(at, r.Line, "reruns entry %d, which is not earlier", e.RerunOf)
	}
	if e.Kind == kindAdmin && e.Admin != nil && e.Admin.Action == actionRetain {
		v.retain, v.retainAt = e.Admin, e.Seq
	}
	v.prevSeq, v.prevHash = at, e.Hash
	v.rep.Head, v.rep.HeadHash = e.Seq, e.Hash
}

// intact checks the entry's stored bytes against its hash; a failure is
// reported at the entry's place.
func (v *verifier) intact(r Record, e Entry, place uint64) bool {
	if canon, err := events.Canonical(json.RawMessage(r.Body)); err != nil || !bytes.Equal(canon, r.Body) {
		v.problem(place, r.Line, "the stored bytes are not in canonical form: they were edited")
		return false
	}
	if h, err := hashBody(r.Body); err != nil || h != e.Hash {
		v.problem(place, r.Line, "hash %s does not match its content (%s): the entry was changed after it was written", short(e.Hash), short(h))
		return false
	}
	return true
}

// checkColumns compares the columns a store keeps beside the body.
func (v *verifier) checkColumns(r Record, e Entry) {
	if r.Line == 0 && r.Seq != e.Seq {
		v.problem(r.Seq, r.Line, "the store files it as seq %d but the entry says %d", r.Seq, e.Seq)
	}
	if r.Hash != "" && r.Hash != e.Hash {
		v.problem(r.Seq, r.Line, "the hash column %s differs from the entry's hash %s", short(r.Hash), short(e.Hash))
	}
	if r.Prev != "" && r.Prev != e.Prev {
		v.problem(r.Seq, r.Line, "the prev column %s differs from the entry's prev %s", short(r.Prev), short(e.Prev))
	}
}

func (v *verifier) finish() {
	r := v.rep
	if r.Entries == 0 {
		return
	}
	r.First = v.first.Seq
	for ver, n := range v.schemas {
		r.Schemas = append(r.Schemas, SchemaCount{Version: ver, Entries: n})
	}
	slices.SortFunc(r.Schemas, func(a, b SchemaCount) int { return a.Version - b.Version })
	// Versions this package knows mixed are what an upgrade leaves; a
	// version it does not know beside them is worth a look.
	if len(r.Schemas) > 1 && slices.ContainsFunc(r.Schemas, func(c SchemaCount) bool { return !knownSchema(c.Version) }) {
		v.warning(r.First, 0, "mixed schema versions: %v", r.Schemas)
	}
	first := v.first
	switch {
	case first.Seq == 0:
		// the first record could not be read; already reported
	case first.Seq == 1 && first.Prev != "":
		v.problem(1, 0, "the first entry has prev %s; the first entry ever has none", short(first.Prev))
	case first.Seq > 1 && v.retain == nil:
		v.problem(first.Seq, 0, "entries 1..%d are missing and no retention entry records dropping them", first.Seq-1)
	case first.Seq > 1 && (v.retain.DroppedTo != first.Seq-1 || v.retain.Boundary != first.Prev):
		v.problem(first.Seq, 0, "the ledger starts at seq %d after prev %s, but the last retention (seq %d) dropped %d..%d before %s", first.Seq, short(first.Prev), v.retainAt, v.retain.DroppedFrom, v.retain.DroppedTo, short(v.retain.Boundary))
	case first.Seq == 1 && v.retain != nil:
		v.problem(1, 0, "entry 1 is present, but the retention at seq %d dropped %d..%d", v.retainAt, v.retain.DroppedFrom, v.retain.DroppedTo)
	}
}

// hashBody is the hash of a stored entry of any schema: the blake3 digest
// of its canonical bytes without the "hash" member.
func hashBody(body []byte) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return "", err
	}
	delete(m, "hash")
	b, err := events.Canonical(m)
	if err != nil {
		return "", err
	}
	return events.Sum(b).String(), nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return `""`
	}
	return h
}
