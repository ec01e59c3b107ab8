package ledger

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// The statuses of a rerun entry (RerunFinding.Status).
const (
	statusSame          = "same"
	statusDiverged      = "diverged"
	statusNotComparable = "not_comparable"
	statusError         = "error"
	statusSkipped       = "skipped"
)

// RerunFinding is what rerunning an entry found; a rerun entry records it.
type RerunFinding struct {
	// Status is one of:
	//   - "same": same key, same verdict and digests;
	//   - "diverged": same key, but the verdict or a digest differs
	//     (Differs names which);
	//   - "not_comparable": the key moved, so the outcomes cannot be
	//     compared (Moved names the components that moved);
	//   - "error": the entry could not be re-evaluated (Error says why);
	//   - "skipped": a rerun or admin entry, which is not re-evaluated.
	//
	// [RerunReport] counts each; [RerunReport.Err] fails on "diverged"
	// and "error".
	Status string `json:"status"`
	// Moved names the key components that were added, removed or changed
	// ("key" when the key moved with the same components).
	Moved []string `json:"moved,omitempty"`
	// Differs names what diverged: verdict, output_digest, chain_digest.
	Differs []string `json:"differs,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// RerunItem is one entry of a rerun report, with both verdicts. Kind is
// the entry's stored kind ("verdict", "replay" for a rerun, or "admin").
type RerunItem struct {
	Seq      uint64 `json:"seq"`
	Kind     string `json:"kind"`
	Scenario string `json:"scenario,omitempty"`
	Path     string `json:"path,omitempty"`
	Test     string `json:"test,omitempty"`
	Package  string `json:"package,omitempty"`

	RecordedVerdict string `json:"recorded_verdict,omitempty"`
	CurrentVerdict  string `json:"current_verdict,omitempty"`
	RecordedKey     string `json:"recorded_key,omitempty"`
	CurrentKey      string `json:"current_key,omitempty"`
	RecordedOutput  string `json:"recorded_output_digest,omitempty"`
	CurrentOutput   string `json:"current_output_digest,omitempty"`
	RecordedChain   string `json:"recorded_chain_digest,omitempty"`
	CurrentChain    string `json:"current_chain_digest,omitempty"`
	RerunFinding
	// RerunSeq is the seq of the rerun entry appended for this item.
	RerunSeq uint64 `json:"rerun_seq,omitempty"`
}

// RerunReport lists every entry in the range with what rerunning it
// found.
type RerunReport struct {
	From          uint64      `json:"from"`
	To            uint64      `json:"to"`
	Items         []RerunItem `json:"items"`
	Same          int         `json:"same"`
	Diverged      int         `json:"diverged"`
	NotComparable int         `json:"not_comparable"`
	Errors        int         `json:"errors"`
	Skipped       int         `json:"skipped"`
}

// RerunConfig configures Store.Rerun.
type RerunConfig struct {
	// From and To bound the seqs rerun; To 0 means up to the head.
	From, To uint64
	// Evaluate re-evaluates a recorded verdict entry now: it reruns the
	// gate that produced it in the current code and returns the current
	// outcome (the entry's gate.Outcome: key, components, verdict,
	// classes, runs, digests, evidence, ...) as an entry that is not
	// sealed; the rerun entry records it for the recorded entry's
	// scenario, test and package. cmd/ledger's runs the entry's Go
	// test. It is required.
	Evaluate func(ctx context.Context, recorded Entry) (Entry, error)
	// Revision and CIJob are recorded in the appended rerun entries.
	Revision, CIJob string
}

// Errors of Rerun.
var (
	// errDiverged: a strict rerun found an entry that diverged or could
	// not be re-evaluated.
	errDiverged = errors.New("ledger: rerun diverged")
	// errEmptyRange: no entry in the range asked for.
	errEmptyRange = errors.New("ledger: no entries in range")
)

// Rerun re-evaluates each verdict entry with seq in [From, To] through
// Evaluate, compares when the key has not moved, and appends one
// rerun entry per evaluated entry, pointing at it; it modifies nothing.
// It returns an error when the store fails or ctx ends; what it found is
// in the report (Err).
func (s *Store) Rerun(ctx context.Context, cfg RerunConfig) (*RerunReport, error) {
	if cfg.From == 0 || (cfg.To != 0 && cfg.To < cfg.From) {
		return nil, fmt.Errorf("ledger: rerun range %d..%d: seqs start at 1 and from <= to", cfg.From, cfg.To)
	}
	if cfg.Evaluate == nil {
		return nil, errors.New("ledger: rerun: RerunConfig.Evaluate is nil")
	}
	var recorded []Entry
	if err := s.Entries(ctx, cfg.From, cfg.To, func(e Entry) error {
		recorded = append(recorded, e)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(recorded) == 0 {
		return nil, fmt.Errorf("%w %d..%d", errEmptyRange, cfg.From, cfg.To)
	}
	rep := &RerunReport{From: cfg.From, To: cmp.Or(cfg.To, recorded[len(recorded)-1].Seq)}
	for _, e := range recorded {
		item, err := rerunOne(ctx, s, cfg, e)
		if err != nil {
			return rep, err
		}
		rep.add(item)
	}
	return rep, nil
}

func rerunOne(ctx context.Context, s *Store, cfg RerunConfig, e Entry) (RerunItem, error) {
	item := RerunItem{
		Seq: e.Seq, Kind: e.Kind, Scenario: e.Scenario, Path: e.Path, Test: e.Test, Package: e.Package,
		RecordedVerdict: string(e.Verdict), RecordedKey: e.Key, RecordedOutput: e.OutputDigest, RecordedChain: e.ChainDigest,
	}
	if e.Kind != kindVerdict {
		item.Status = statusSkipped
		return item, nil
	}
	cur, err := cfg.Evaluate(ctx, e)
	if ctx.Err() != nil {
		return item, ctx.Err()
	}
	if err != nil {
		cur = Entry{}
		item.RerunFinding = RerunFinding{Status: statusError, Error: err.Error()}
	} else {
		item.CurrentVerdict, item.CurrentKey, item.CurrentOutput, item.CurrentChain = string(cur.Verdict), cur.Key, cur.OutputDigest, cur.ChainDigest
		item.RerunFinding = compare(e, cur)
	}
	out := item.RerunFinding
	// What the rerun found, for what the entry names.
	rec := Entry{Kind: kindRerun, Outcome: cur.Outcome, Path: e.Path, Revision: cfg.Revision, CIJob: cfg.CIJob, RerunOf: e.Seq, Rerun: &out}
	rec.Scenario, rec.Test, rec.Package = e.Scenario, e.Test, e.Package
	sealed, err := s.Append(ctx, rec)
	if err != nil {
		return item, fmt.Errorf("ledger: append the rerun of entry %d: %w", e.Seq, err)
	}
	item.RerunSeq = sealed.Seq
	return item, nil
}

// compare says how the current evaluation relates to the recorded one.
func compare(rec, cur Entry) RerunFinding {
	if rec.Key != cur.Key {
		moved := movedComponents(rec.Components, cur.Components)
		if len(moved) == 0 {
			moved = []string{"key"}
		}
		return RerunFinding{Status: statusNotComparable, Moved: moved}
	}
	var differs []string
	if rec.Verdict != cur.Verdict {
		differs = append(differs, "verdict")
	}
	if rec.OutputDigest != cur.OutputDigest {
		differs = append(differs, "output_digest")
	}
	if rec.ChainDigest != cur.ChainDigest {
		differs = append(differs, "chain_digest")
	}
	if len(differs) > 0 {
		return RerunFinding{Status: statusDiverged, Differs: differs}
	}
	return RerunFinding{Status: statusSame}
}

// movedComponents returns the sorted names whose values differ between a
// and b, including names present in only one.
func movedComponents(a, b map[string]string) []string {
	var moved []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[k]; !ok || v != a[k] {
			moved = append(moved, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			moved = append(moved, k)
		}
	}
	slices.Sort(moved)
	return moved
}

func (r *RerunReport) add(it RerunItem) {
	r.Items = append(r.Items, it)
	switch it.Status {
	case statusSame:
		r.Same++
	case statusDiverged:
		r.Diverged++
	case statusNotComparable:
		r.NotComparable++
	case statusError:
		r.Errors++
	case statusSkipped:
		r.Skipped++
	}
}

// Err returns nil unless an entry diverged or could not be re-evaluated;
// then an error wrapping errDiverged that names their seqs. An entry whose
// key moved is not a divergence: its outcomes cannot be compared.
func (r *RerunReport) Err() error {
	var seqs []uint64
	for _, it := range r.Items {
		if it.Status == statusDiverged || it.Status == statusError {
			seqs = append(seqs, it.Seq)
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d entr(ies) at seq %v", errDiverged, len(seqs), seqs)
}

// Text writes the report for people: one line per entry with both
// verdicts, then the totals.
func (r *RerunReport) Text(w io.Writer) error {
	var b bytes.Buffer
	for _, it := range r.Items {
		fmt.Fprintf(&b, "seq %d %s", it.Seq, display(it.Scenario))
		if it.Path != "" {
			fmt.Fprintf(&b, "/%s", display(it.Path))
		}
		fmt.Fprintf(&b, ": %s", it.Status)
		switch it.Status {
		case statusSkipped:
			fmt.Fprintf(&b, " (%s entry)", kindWord(it.Kind))
		case statusError:
			fmt.Fprintf(&b, " (recorded %s): %s", it.RecordedVerdict, display(it.Error))
		case statusNotComparable:
			fmt.Fprintf(&b, " (recorded %s, now %s): key %s -> %s, moved: %v", it.RecordedVerdict, it.CurrentVerdict, short(it.RecordedKey), short(it.CurrentKey), it.Moved)
		case statusDiverged:
			fmt.Fprintf(&b, " (recorded %s, now %s): differs in %v", it.RecordedVerdict, it.CurrentVerdict, it.Differs)
		default:
			fmt.Fprintf(&b, " (recorded %s, now %s)", it.RecordedVerdict, it.CurrentVerdict)
		}
		if it.RerunSeq != 0 {
			fmt.Fprintf(&b, " [rerun entry %d]", it.RerunSeq)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%d entries: %d same, %d diverged, %d not comparable, %d errors, %d skipped\n",
		len(r.Items), r.Same, r.Diverged, r.NotComparable, r.Errors, r.Skipped)
	_, err := w.Write(b.Bytes())
	return err
}

// kindWord is how the text names an entry's kind: a rerun by that word,
// whatever schema 1 stores for it; any other kind as stored.
func kindWord(kind string) string {
	if kind == kindRerun {
		return "rerun"
	}
	return display(kind)
}
