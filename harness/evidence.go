package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/safename"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/replay"
)

// ErrCorruptTape is wrapped by ReadTape errors.
var ErrCorruptTape = errors.New("corrupt tape file")

// TapeError locates a ReadTape failure.
type TapeError struct {
	Record int // 0-based index of the record that failed
	Offset int // byte offset of that record
	Err    error
}

func (e *TapeError) Error() string {
	return fmt.Sprintf("tape record %d at byte %d: %v", e.Record, e.Offset, e.Err)
}

func (e *TapeError) Unwrap() error { return e.Err }

// AppendTape appends the tape file encoding of evs to dst: the canonical
// binary records of events.AppendRecord, back to back, fields exactly as
// recorded (nothing stripped).
func AppendTape(dst []byte, evs []events.Event) []byte {
	for _, e := range evs {
		dst = events.AppendRecord(dst, e)
	}
	return dst
}

// ReadTape decodes a tape file written by AppendTape (the *.tape evidence
// files) and checks each event on its own (events.Event.Verify).
func ReadTape(b []byte) ([]events.Event, error) {
	var evs []events.Event
	for off := 0; off < len(b); {
		e, n, err := events.DecodeRecord(b[off:])
		if err == nil {
			err = e.Verify()
			if err != nil {
				err = fmt.Errorf("%w: %w", ErrCorruptTape, err)
			}
		}
		if err != nil {
			return nil, &TapeError{Record: len(evs), Offset: off, Err: err}
		}
		e.Payload = bytes.Clone(e.Payload)
		evs = append(evs, e)
		off += n
	}
	return evs, nil
}

func evidenceDir(rc resolved, e env, scenario string) (string, error) {
	var base string
	switch {
	case rc.ArtifactDir != "":
		base = rc.ArtifactDir
	case e.artifactDir != nil:
		d, err := e.artifactDir()
		if err != nil {
			return "", err
		}
		base = d
	default:
		d, err := os.MkdirTemp("", "codegenie-gate-")
		if err != nil {
			return "", fmt.Errorf("harness: evidence directory: %w", err)
		}
		base = d
	}
	dir := filepath.Join(base, safename.Of(scenario))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("harness: evidence directory: %w", err)
	}
	return filepath.Abs(dir)
}

// writeEvidence writes, for run 0 and the divergent run, the tape (binary
// and JSON lines) and the output bytes, then the divergence as JSON and the
// report as text.
func writeEvidence(dir string, ref, other *runRecord, rep *Report) ([]Evidence, error) {
	var ev []Evidence
	var bundles []string
	for _, r := range []*runRecord{ref, other} {
		stem := filepath.Join(dir, fmt.Sprintf("run-%03d", r.run))
		files := []struct {
			what, ext, note string
			data            []byte
		}{
			{"tape", ".tape", "canonical records; harness.ReadTape", AppendTape(nil, r.out.Events)},
			{"events", ".events.jsonl", "one event per line", eventsJSONL(r.out.Events)},
			{"output", ".out", "the output bytes (DiffBytes)", r.out.DiffBytes},
		}
		for _, f := range files {
			p := stem + f.ext
			if err := writeFileAtomic(p, f.data); err != nil {
				return ev, err
			}
			ev = append(ev, Evidence{Run: r.run, What: f.what, Path: p, Note: f.note})
		}
		p, err := writeBundle(dir, rep.Scenario, r)
		if err != nil {
			return ev, err
		}
		ev = append(ev, Evidence{Run: r.run, What: "bundle", Path: p, Note: "replay bundle; open with " + hint.Tool("replay", "show", p)})
		bundles = append(bundles, p)
	}
	rep.Divergence.ReplayDiffCommand = hint.Tool("replay", "diff", bundles[0], bundles[1])
	// The divergence is written before the report so that the report can
	// list every file, including itself.
	divPath := filepath.Join(dir, "divergence.json")
	repPath := filepath.Join(dir, "report.txt")
	ev = append(ev,
		Evidence{Run: -1, What: "divergence", Path: divPath, Note: "the divergence as JSON"},
		Evidence{Run: -1, What: "report", Path: repPath, Note: "this report"})
	rep.Divergence.Evidence = ev
	js, err := json.MarshalIndent(rep.Divergence, "", "  ")
	if err != nil {
		return ev, fmt.Errorf("harness: encode divergence: %w", err)
	}
	if err := writeFileAtomic(divPath, append(js, '\n')); err != nil {
		return ev, err
	}
	if err := writeFileAtomic(repPath, []byte(rep.String())); err != nil {
		return ev, err
	}
	return ev, nil
}

// writeBundle writes one run as a single-file replay bundle (replay.WriteRun)
// in dir and returns its path.
func writeBundle(dir, scenario string, r *runRecord) (string, error) {
	pin := r.out.Pin
	if pin.RunKey == "" {
		pin.RunKey = "unpinned: the scenario reported no pin"
	}
	meta := replay.Metadata{
		Pin:         pin,
		Scenario:    scenario,
		Run:         fmt.Sprintf("run-%03d", r.run),
		ToolVersion: "codegenie/harness",
	}
	p, err := replay.WriteRun(dir, meta, r.out.Events)
	if err != nil {
		return "", fmt.Errorf("harness: write replay bundle of run %d: %w", r.run, err)
	}
	return filepath.Abs(p)
}

// eventJSON is one line of an *.events.jsonl evidence file.
type eventJSON struct {
	Seq           uint64          `json:"seq"`
	Parent        uint64          `json:"parent"`
	Kind          events.Kind     `json:"kind"`
	Lane          string          `json:"lane,omitempty"`
	PayloadDigest events.Digest   `json:"payload_digest"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	PayloadText   string          `json:"payload_text,omitempty"` // when the payload is not JSON
	EmittedAt     string          `json:"emitted_at,omitempty"`
	AuditEventID  string          `json:"audit_event_id,omitempty"`
	BudgetTokenID string          `json:"budget_token_id,omitempty"`
}

func eventsJSONL(evs []events.Event) []byte {
	var buf bytes.Buffer
	for _, e := range evs {
		j := eventJSON{Seq: e.Seq, Parent: e.Parent, Kind: e.Kind, Lane: e.Lane, PayloadDigest: e.PayloadDigest,
			AuditEventID: e.AuditEventID, BudgetTokenID: e.BudgetTokenID}
		if json.Valid(e.Payload) {
			j.Payload = e.Payload
		} else {
			j.PayloadText = string(e.Payload)
		}
		if !e.EmittedAt.IsZero() {
			j.EmittedAt = e.EmittedAt.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
		}
		b, err := json.Marshal(j)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"error": err.Error()})
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// writeFileAtomic replaces path with data (atomicfile.WriteFile), so a
// half-written file never replaces a good one.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}
