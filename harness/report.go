package harness

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/codegenie/codegenie/events"
)

// Report is the result of a gate run, as data: Text and String render it
// for people, encoding/json for machines (durations are nanoseconds).
type Report struct {
	Scenario string `json:"scenario"`
	// Iterations is the number of runs asked for; Runs the number made.
	Iterations int `json:"iterations"`
	Runs       int `json:"runs"`
	Floor      int `json:"floor"`
	// Budget is the time budget (0: none); BudgetExceeded says it ran out
	// before Iterations runs were made.
	Budget         time.Duration `json:"budget,omitempty"`
	BudgetExceeded bool          `json:"budget_exceeded,omitempty"`
	// Cancelled is the context error that stopped the runs early, if any.
	Cancelled string `json:"cancelled,omitempty"`
	// Wall is the wall time of all runs.
	Wall time.Duration `json:"wall_ns"`
	// GOMAXPROCS lists the values used, ascending.
	GOMAXPROCS []int  `json:"gomaxprocs"`
	Isolation  string `json:"isolation"`
	// Allowlist is the allowlist in force.
	Allowlist []AllowEntry `json:"allowlist"`
	// DistinctOutputs and DistinctTapes count the distinct output-byte
	// values and distinct stripped tapes (chain digests) over all runs; a
	// passing gate has one of each.
	DistinctOutputs int `json:"distinct_outputs"`
	DistinctTapes   int `json:"distinct_tapes"`
	// OutputDigest and ChainDigest are run 0's blake3 digest of the output
	// bytes and chain digest of the stripped tape; Events its event count.
	OutputDigest events.Digest `json:"output_digest"`
	ChainDigest  events.Digest `json:"chain_digest"`
	Events       int           `json:"events"`
	// Divergence is the first run that differs from run 0, or nil.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Leaks lists goroutines runs left alive.
	Leaks []Leak `json:"leaks,omitempty"`
	// RunErrors lists failed runs (the runs stop at the first).
	RunErrors []RunError `json:"run_errors,omitempty"`
	// EvidenceError says why the evidence of a divergence could not be
	// written.
	EvidenceError string `json:"evidence_error,omitempty"`
	ReproCommand  string `json:"repro_command,omitempty"`
}

// Divergence describes the first run that differs from run 0.
type Divergence struct {
	// Run is the first run whose output or tape differs from run 0's.
	Run int `json:"run"`
	// GOMAXPROCS of that run and of run 0.
	GOMAXPROCS    int `json:"gomaxprocs"`
	RefGOMAXPROCS int `json:"ref_gomaxprocs"`
	// DistinctOutputs and DistinctTapes over all runs made.
	DistinctOutputs int `json:"distinct_outputs"`
	DistinctTapes   int `json:"distinct_tapes"`
	// Output is the output-byte difference, nil when the outputs are equal.
	Output *OutputDiff `json:"output,omitempty"`
	// Event is the first divergent event, nil when the tapes are equal.
	Event *events.Divergence `json:"event,omitempty"`
	// Evidence lists the files written for both runs.
	Evidence []Evidence `json:"evidence,omitempty"`
	// ReplayDiffCommand compares the two runs' replay bundles offline.
	ReplayDiffCommand string `json:"replay_diff_command,omitempty"`
	ReproCommand      string `json:"repro_command,omitempty"`
}

// OutputDiff locates the first difference between two runs' output bytes.
type OutputDiff struct {
	Offset   int           `json:"offset"`
	LenA     int           `json:"len_a"`
	LenB     int           `json:"len_b"`
	DigestA  events.Digest `json:"digest_a"`
	DigestB  events.Digest `json:"digest_b"`
	ExcerptA string        `json:"excerpt_a"`
	ExcerptB string        `json:"excerpt_b"`
}

// Evidence is one file written for a divergent run.
type Evidence struct {
	Run  int    `json:"run"`            // -1 for files about both runs
	What string `json:"what"`           // "tape", "events", "output", "bundle", "report", "divergence"
	Path string `json:"path"`           // absolute
	Note string `json:"note,omitempty"` // e.g. how to open it
}

// Leak lists the goroutines one run left behind.
type Leak struct {
	Run        int         `json:"run"`
	Goroutines []Goroutine `json:"goroutines"`
}

// RunError is a run that failed.
type RunError struct {
	Run        int    `json:"run"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Err        string `json:"error"`
}

func (r *Report) noteProcs(p int) {
	if i, found := slices.BinarySearch(r.GOMAXPROCS, p); !found {
		r.GOMAXPROCS = slices.Insert(r.GOMAXPROCS, i, p)
	}
}

// OK reports whether the gate passed.
func (r *Report) OK() bool { return r.Err() == nil }

// Err returns nil when the gate passed, else an error wrapping each of
// ErrNondeterministic, ErrBelowFloor, ErrLeak and ErrRunFailed that
// applies, with a one-line reason each. The full story is in Text.
func (r *Report) Err() error {
	var errs []error
	if r.Divergence != nil {
		d := r.Divergence
		msg := fmt.Sprintf("scenario %s: run %d differs from run 0 (%d distinct outputs, %d distinct tapes in %d runs)", r.Scenario, d.Run, d.DistinctOutputs, d.DistinctTapes, r.Runs)
		if d.Event != nil {
			msg += fmt.Sprintf("; first divergent event %d (%s) differs in %s", d.Event.Index, d.Event.Kind, d.Event.Field)
		}
		errs = append(errs, fmt.Errorf("%w: %s", ErrNondeterministic, msg))
	}
	for _, e := range r.RunErrors {
		errs = append(errs, fmt.Errorf("%w: scenario %s run %d: %s", ErrRunFailed, r.Scenario, e.Run, firstLine(e.Err)))
	}
	for _, l := range r.Leaks {
		errs = append(errs, fmt.Errorf("%w: scenario %s run %d left %d goroutine(s) running", ErrLeak, r.Scenario, l.Run, len(l.Goroutines)))
	}
	if r.Runs < r.Floor && len(r.RunErrors) == 0 {
		why := "the time budget ran out"
		if r.Cancelled != "" {
			why = "the context was cancelled (" + r.Cancelled + ")"
		}
		errs = append(errs, fmt.Errorf("%w: scenario %s made %d runs, floor is %d: %s; speed the scenario up or raise Budget, never lower the floor to pass", ErrBelowFloor, r.Scenario, r.Runs, r.Floor, why))
	}
	return errors.Join(errs...)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Summary is one line: verdict, runs, distinct outputs, digests, wall time.
func (r *Report) Summary() string {
	verdict := "ok"
	if !r.OK() {
		verdict = "FAIL"
	}
	s := fmt.Sprintf("harness %s %s: %d/%d runs, %d distinct output(s), %d distinct tape(s) of %d events, output %s, chain %s, GOMAXPROCS %s, %v",
		verdict, r.Scenario, r.Runs, r.Iterations, r.DistinctOutputs, r.DistinctTapes, r.Events,
		short(r.OutputDigest), short(r.ChainDigest), procsText(r.GOMAXPROCS), r.Wall.Round(time.Microsecond))
	if r.BudgetExceeded {
		s += fmt.Sprintf(" — BUDGET EXCEEDED (%v): only %d of %d iterations ran", r.Budget, r.Runs, r.Iterations)
	}
	return s
}

func short(d events.Digest) string { return d.String()[:16] }

func procsText(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}

// String renders the report; see Text.
func (r *Report) String() string {
	var sb strings.Builder
	_ = r.Text(&sb)
	return sb.String()
}

// Text writes the full human rendering of r to w: the verdict, the runs,
// and for a failure everything needed to act on it — the divergent run,
// event, field, byte offset and excerpts, the payload field diff, the
// causal chain, the output-byte difference, leaked goroutine stacks, where
// the evidence is, and the command that reproduces it. Nothing is cut
// beyond the documented excerpts.
func (r *Report) Text(w io.Writer) error {
	var sb strings.Builder
	sb.WriteString(r.Summary())
	sb.WriteString("\n")
	if r.BudgetExceeded {
		fmt.Fprintf(&sb, "!!! TIME BUDGET EXCEEDED: %d of %d iterations ran in %v (budget %v); floor %d\n", r.Runs, r.Iterations, r.Wall.Round(time.Millisecond), r.Budget, r.Floor)
	}
	if err := r.Err(); err != nil {
		sb.WriteString("failures:\n")
		for _, l := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(&sb, "  - %s\n", l)
		}
	}
	fmt.Fprintf(&sb, "isolation: %s\n", r.Isolation)
	sb.WriteString("allowlist (fields allowed to differ):\n")
	if len(r.Allowlist) == 0 {
		sb.WriteString("  (none: every field is compared)\n")
	}
	for _, a := range r.Allowlist {
		fmt.Fprintf(&sb, "  %s: %s\n", a.Field, a.Reason)
	}
	if d := r.Divergence; d != nil {
		fmt.Fprintf(&sb, "\nrun %d (GOMAXPROCS %d) is the first run that differs from run 0 (GOMAXPROCS %d); %d distinct outputs and %d distinct tapes over %d runs\n",
			d.Run, d.GOMAXPROCS, d.RefGOMAXPROCS, d.DistinctOutputs, d.DistinctTapes, r.Runs)
		if o := d.Output; o != nil {
			fmt.Fprintf(&sb, "output bytes differ at offset %d (len run 0 = %d, len run %d = %d)\n", o.Offset, o.LenA, d.Run, o.LenB)
			fmt.Fprintf(&sb, "  run 0:  %s\n  run %d: %s\n", o.ExcerptA, d.Run, o.ExcerptB)
			fmt.Fprintf(&sb, "  digests: %s != %s\n", o.DigestA, o.DigestB)
		} else {
			sb.WriteString("output bytes are identical; the tapes differ\n")
		}
		if d.Event != nil {
			fmt.Fprintf(&sb, "event tape (a = run 0, b = run %d):\n", d.Run)
			var eb strings.Builder
			_ = d.Event.Text(&eb)
			for _, l := range strings.Split(strings.TrimSuffix(eb.String(), "\n"), "\n") {
				fmt.Fprintf(&sb, "  %s\n", l)
			}
		} else {
			sb.WriteString("event tapes are identical after stripping the allowlist\n")
		}
		if len(d.Evidence) > 0 {
			sb.WriteString("evidence:\n")
			for _, e := range d.Evidence {
				who := "both runs"
				if e.Run >= 0 {
					who = fmt.Sprintf("run %d", e.Run)
				}
				fmt.Fprintf(&sb, "  %s %s: %s", who, e.What, e.Path)
				if e.Note != "" {
					fmt.Fprintf(&sb, "  (%s)", e.Note)
				}
				sb.WriteString("\n")
			}
		}
		if d.ReplayDiffCommand != "" {
			fmt.Fprintf(&sb, "compare the bundles: %s\n", d.ReplayDiffCommand)
		}
	}
	if r.EvidenceError != "" {
		fmt.Fprintf(&sb, "evidence could not be written: %s\n", r.EvidenceError)
	}
	for _, e := range r.RunErrors {
		fmt.Fprintf(&sb, "\nrun %d (GOMAXPROCS %d) failed:\n%s\n", e.Run, e.GOMAXPROCS, e.Err)
	}
	for _, l := range r.Leaks {
		fmt.Fprintf(&sb, "\nrun %d leaked %d goroutine(s):\n", l.Run, len(l.Goroutines))
		for _, g := range l.Goroutines {
			fmt.Fprintf(&sb, "%s\n\n", g.Stack)
		}
	}
	if !r.OK() && r.ReproCommand != "" {
		fmt.Fprintf(&sb, "reproduce: %s\n", r.ReproCommand)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
