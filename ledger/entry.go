package ledger

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// schemaVersion is the entry schema this package writes. Schema 1 entries
// hold the members a gate's outcome had before it gained its own
// definition (gate.Outcome); schema 2 entries may hold any of its members.
// Both are read and checked strictly.
const schemaVersion = 2

// knownSchema reports whether this package knows entries of schema v.
func knownSchema(v int) bool { return v == 1 || v == schemaVersion }

// The kinds of entry (Entry.Kind).
const (
	// kindVerdict is one gate verdict for one scenario and path: the kind
	// Append gives an entry whose Kind is empty.
	kindVerdict = "verdict"
	// kindRerun is a rerun: the re-evaluation of an earlier entry
	// (Entry.RerunOf). Its stored word is "replay", schema 1's name for it
	// (see the package documentation, Entries).
	kindRerun = "replay"
	// kindAdmin is an administrative act on the ledger itself: retention.
	kindAdmin = "admin"
)

// validVerdict reports whether v is one of the three verdicts a ledger
// records: gate.Pass, gate.Nondeterministic or gate.Broken.
func validVerdict(v gate.Verdict) bool {
	return v == gate.Pass || v == gate.Nondeterministic || v == gate.Broken
}

// Entry is one ledger record: a gate's outcome (gate.Outcome: the
// scenario, its Go test and package directory, the verdict, runs,
// classes, run key and components, digests, evidence and the rest) and
// the chain's own members. Append sets Schema and Kind (when zero), Seq,
// RecordedAt, Prev and Hash; the caller sets the rest. It holds plain data
// only, so that any gate can write it.
type Entry struct {
	Schema int    `json:"schema"`
	Seq    uint64 `json:"seq"`
	// Kind is "verdict" (one gate verdict; Append sets it when empty),
	// "replay" (a rerun, written by [Store.Rerun]) or "admin" (written by
	// [Store.Retain]).
	Kind string `json:"kind"`

	// Outcome is what was gated and what the gate found; its Verdict is
	// gate.Pass, gate.Nondeterministic or gate.Broken, its Test and
	// Package say how to re-run it (go test Package -run Test, the
	// package directory relative to the module root).
	gate.Outcome
	// Path names, with the scenario, what was gated (Flakes tallies by
	// both).
	Path string `json:"path,omitempty"`

	// Revision is the code revision that produced the verdict; CIJob the
	// CI job identity, when there was one.
	Revision string `json:"revision,omitempty"`
	CIJob    string `json:"ci_job,omitempty"`

	// RerunOf is the seq of the entry a rerun entry re-evaluated, and
	// Rerun what the re-evaluation found. Their stored members keep schema
	// 1's names, replays and replay.
	RerunOf uint64        `json:"replays,omitempty"`
	Rerun   *RerunFinding `json:"replay,omitempty"`
	// Admin is the administrative act of an admin entry.
	Admin *Admin `json:"admin,omitempty"`

	// RecordedAt is set once, by Append, from the store's clock. It is the
	// entry's own time and the only clock later evaluations consult.
	RecordedAt time.Time `json:"recorded_at"`
	// Prev is the previous entry's Hash ("" for the first entry ever);
	// Hash the blake3 digest of the entry's canonical bytes without Hash.
	Prev string `json:"prev,omitempty"`
	Hash string `json:"hash,omitempty"`
}

// Admin is an administrative act recorded in the ledger.
type Admin struct {
	// Action is "retain": entries DroppedFrom..DroppedTo were removed.
	Action      string `json:"action"`
	DroppedFrom uint64 `json:"dropped_from"`
	DroppedTo   uint64 `json:"dropped_to"`
	// Boundary is the Hash of entry DroppedTo, which the first kept entry
	// names as its Prev.
	Boundary string `json:"boundary"`
	Reason   string `json:"reason"`
}

// actionRetain is the Admin.Action of a retention.
const actionRetain = "retain"

// Errors of entries.
var (
	// errInvalidEntry: an entry breaks the schema.
	errInvalidEntry = errors.New("ledger: invalid entry")
)

// Canonical returns the entry's canonical JSON bytes (events.Canonical):
// what the embedded store writes on one line and Postgres keeps as body.
func (e Entry) Canonical() ([]byte, error) {
	b, err := events.Canonical(e)
	if err != nil {
		return nil, fmt.Errorf("ledger: entry %d: %w", e.Seq, err)
	}
	return b, nil
}

// ComputeHash returns the hex blake3 digest of the entry's canonical bytes
// with Hash empty.
func (e Entry) ComputeHash() (string, error) {
	e.Hash = ""
	b, err := e.Canonical()
	if err != nil {
		return "", err
	}
	return events.Sum(b).String(), nil
}

// seal fills the fields Append owns, makes every string storable (see
// storableEntry) and returns the entry as stored and its stored bytes, so
// that the hash covers the stored form and both stores keep the same.
func seal(e Entry, seq uint64, prev string, now time.Time) (Entry, []byte, error) {
	e, err := storableEntry(e)
	if err != nil {
		return Entry{}, nil, err
	}
	if e.Schema == 0 {
		e.Schema = schemaVersion
	}
	e.Seq, e.Prev = seq, prev
	e.RecordedAt = now.UTC().Truncate(time.Microsecond)
	h, err := e.ComputeHash()
	if err != nil {
		return Entry{}, nil, err
	}
	e.Hash = h
	b, err := e.Canonical()
	if err != nil {
		return Entry{}, nil, err
	}
	if len(b) > ledgerdb.MaxEntryBytes {
		return Entry{}, nil, fmt.Errorf("%w: %d bytes, at most %d", errInvalidEntry, len(b), ledgerdb.MaxEntryBytes)
	}
	return e, b, nil
}

// checkNew validates an entry handed to Append and returns it with an
// empty Kind set to "verdict": the fields Append owns must be zero and the
// rest must satisfy the schema.
func checkNew(e Entry) (Entry, error) {
	if e.Seq != 0 || e.Prev != "" || e.Hash != "" || !e.RecordedAt.IsZero() {
		return Entry{}, fmt.Errorf("%w: Seq, Prev, Hash and RecordedAt are set by Append; leave them zero", errInvalidEntry)
	}
	if e.Schema < 0 {
		return Entry{}, fmt.Errorf("%w: schema %d", errInvalidEntry, e.Schema)
	}
	if e.Kind == "" {
		e.Kind = kindVerdict
	}
	return e, checkFields(e)
}

// checkFields checks the rules of a known schema that do not depend on
// other entries.
func checkFields(e Entry) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errInvalidEntry, fmt.Sprintf(format, args...))
	}
	switch e.Kind {
	case kindVerdict, kindRerun:
		if e.Scenario == "" {
			return bad("%s entry without a scenario", e.Kind)
		}
		// A rerun that could not re-evaluate has no current verdict.
		erred := e.Kind == kindRerun && e.Rerun != nil && e.Rerun.Status == statusError && e.Verdict == ""
		if !validVerdict(e.Verdict) && !erred {
			return bad("verdict %q is not PASS, NONDETERMINISTIC or BROKEN", e.Verdict)
		}
		if e.Kind == kindRerun && (e.RerunOf == 0 || e.Rerun == nil) {
			return bad("rerun entry (kind replay) without the seq it reruns or its outcome")
		}
	case kindAdmin:
		if e.Admin == nil || e.Admin.Action != actionRetain {
			return bad("admin entry without a retain action")
		}
	default:
		return bad("kind %q is not verdict, replay or admin", e.Kind)
	}
	if err := e.Outcome.Validate(); err != nil {
		return bad("%v", err)
	}
	return nil
}

// checkNames checks the members a command turns into arguments or paths,
// in an entry of any schema: the package (hint.CheckPackage), the test
// (hint.CheckTestName) and the evidence path (hint.CheckPathWord), each
// when set. Rerun runs go test with the first two, so a ledger, which
// readers treat as untrusted, never chooses a flag of go test.
func checkNames(e Entry) error {
	checks := []struct {
		value string
		check func(string) error
	}{{e.Package, hint.CheckPackage}, {e.Test, hint.CheckTestName}, {e.Evidence, hint.CheckPathWord}}
	for _, c := range checks {
		if c.value == "" {
			continue
		}
		if err := c.check(c.value); err != nil {
			return fmt.Errorf("%w: %v", errInvalidEntry, err)
		}
	}
	return nil
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// decodeEntry parses stored bytes strictly: one JSON object, no unknown
// fields for a known schema, digests of 64 hex digits. unknownSchema is
// true when the entry declares a schema this package does not know, in
// which case its fields were read leniently.
func decodeEntry(body []byte) (e Entry, unknownSchema bool, err error) {
	if len(body) > ledgerdb.MaxEntryBytes {
		return Entry{}, false, fmt.Errorf("%d bytes, at most %d", len(body), ledgerdb.MaxEntryBytes)
	}
	var probe struct {
		Schema int `json:"schema"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return Entry{}, false, fmt.Errorf("not a JSON entry: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if knownSchema(probe.Schema) {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&e); err != nil {
		return Entry{}, false, fmt.Errorf("not a schema %d entry: %w", probe.Schema, err)
	}
	if dec.More() {
		return Entry{}, false, errors.New("trailing data after the entry")
	}
	return e, !knownSchema(probe.Schema), nil
}
