package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// Report is the result of a gate run, as data: Text and String render it
// for people, encoding/json for machines (durations are nanoseconds). Its
// gate.Outcome (the scenario, test and package, verdict, runs, classes,
// run key, digests, causes, evidence bundle and commands) is what a result
// file and a ledger entry hold of it; Result returns that.
type Report struct {
	gate.Outcome
	// Dir is the directory of the package of the test that ran the gate,
	// absolute; Shard the -gate.shard in force. Empty under Iterate.
	Dir   string `json:"dir,omitempty"`
	Shard string `json:"shard,omitempty"`
	// Budget is the time budget (0: none); BudgetExceeded says it ran out
	// before Iterations runs were made.
	Budget         time.Duration `json:"budget,omitempty"`
	BudgetExceeded bool          `json:"budget_exceeded,omitempty"`
	// FailedFast says Config.FailFast stopped the runs at a divergence.
	FailedFast bool `json:"failed_fast,omitempty"`
	// Cancelled says what stopped the runs early, if anything: the
	// context's cancellation or a hung run (error kind "hung").
	Cancelled string `json:"cancelled,omitempty"`
	// Wall is the wall time of all runs.
	Wall time.Duration `json:"wall_ns"`
	// GOMAXPROCS lists the values used in the test process, ascending.
	GOMAXPROCS []int  `json:"gomaxprocs"`
	Isolation  string `json:"isolation"`
	// Allowlist is the allowlist in force.
	Allowlist []AllowEntry `json:"allowlist"`
	// Divergence compares the first runs of the two largest classes.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Processes describes the child processes: how they were perturbed,
	// and each one's run, class and environment.
	Processes *ProcessSummary `json:"processes,omitempty"`
	// Chunking is, by run number, the plan that cut the replayed response
	// bodies of each run made in the test process into Reads: "as
	// recorded" (one event-stream frame, or the whole body, per Read;
	// always run 0), "split mid-frame", "frames joined", "single bytes"
	// or "mixed"; "" for a run that replayed nothing or was made in a
	// child process (which delivers as recorded). The bytes and their
	// recorded timing are the same under every plan.
	Chunking []string `json:"chunking,omitempty"`
	// FreshClass, when not 0, says state is carried across runs: class
	// FreshClass (1-based, whatever its size) holds what a fresh process
	// gives (the first run of each process), the others what the test
	// process gives once a run or earlier work filled some state.
	FreshClass int `json:"fresh_class,omitempty"`
	// Leaks lists goroutines runs left alive (the first runs of the leak
	// classes).
	Leaks []Leak `json:"leaks,omitempty"`
	// Recorded lists the cassettes run 0 recorded and saved (the
	// cassettes record switch selected them); run 0 was then made again,
	// replaying them. They are kept only if the gate passed.
	Recorded []string `json:"recorded,omitempty"`
	// RecordingDiscarded says, one line a cassette, why a recording of
	// run 0 was not kept: it was not saved (its Close failed), or the
	// gate did not pass, so the cassette is back as it was.
	RecordingDiscarded string `json:"recording_discarded,omitempty"`
	// RecordingError is the error the scenario returned in run 0 while
	// it recorded, when a recording it made was not saved (it failed
	// before sending, or without sending anything): masked, it is what to
	// fix before recording again. The runs after it replayed what was
	// there before.
	RecordingError string `json:"recording_error,omitempty"`
	// EvidenceFiles lists the files written for a failure (the bundle is
	// also Evidence); EvidenceError says why they could not be written.
	EvidenceFiles []Evidence `json:"evidence_files,omitempty"`
	EvidenceError string     `json:"evidence_error,omitempty"`
	// Commands (in the Outcome) lists, as data, every command the report
	// prints (Text prints each as Command.String renders it): reproduce
	// when the gate failed, compare when a bundle holds the two largest
	// classes, and re-record only for a Broken verdict whose runs all
	// missed the cassette, left interactions unused or found no cassette:
	// re-recording never fixes a nondeterminism, it bakes one variant
	// into the cassette. ReproCommand and ReRecordCommand are the
	// reproduce and re-record commands as text ("" for none);
	// ReproCommand is set even when the gate passed.
	ReproCommand    string `json:"repro_command,omitempty"`
	ReRecordCommand string `json:"rerecord_command,omitempty"`
}

// Divergence compares the first runs of the two largest classes.
type Divergence struct {
	// ClassA and ClassB are 1-based class numbers; RunA and RunB their
	// first runs.
	ClassA int `json:"class_a"`
	ClassB int `json:"class_b"`
	RunA   int `json:"run_a"`
	RunB   int `json:"run_b"`
	// Output is the output-byte difference, nil when the outputs are equal.
	Output *bundle.OutputDiff `json:"output,omitempty"`
	// Event is the first divergent event, nil when the tapes are equal.
	Event *events.Divergence `json:"event,omitempty"`
	// PinDiff lists the pins that differ, one "name: a != b" line each.
	PinDiff []string `json:"pin_diff,omitempty"`
	// RequestVaries says each run sent a request the other never sent
	// (compared as sets, whatever order concurrent calls were made in):
	// the nondeterminism is upstream of the recorded calls. RequestDiff
	// then lists how the two most alike of those requests differ (method,
	// URL, body fields of run A != run B).
	RequestVaries bool     `json:"request_varies,omitempty"`
	RequestDiff   []string `json:"request_diff,omitempty"`
	// Assignment lists, one line a request, the requests that several
	// recorded interactions matched and that were answered by different
	// ones in different classes: the lane that sent it (see
	// events.Lane.Context), its order in the lane, and which interaction
	// answered it in the kept run of each class. The outcome then depends
	// on the arrival order of identical concurrent requests
	// (Config.AssignByLane).
	Assignment []string `json:"assignment,omitempty"`
	// CompareCommand compares the two runs in the evidence bundle.
	CompareCommand string `json:"compare_command,omitempty"`
}

// Evidence is one file written for a failure.
type Evidence struct {
	What string `json:"what"`           // "bundle", "report", "result", ...
	Path string `json:"path"`           // absolute
	Note string `json:"note,omitempty"` // e.g. how to open it
}

// Leak lists the goroutines one run left behind.
type Leak struct {
	Run        int         `json:"run"`
	Goroutines []Goroutine `json:"goroutines"`
}

// The conditions a gate fails on. Report.Err wraps each that applies.
var (
	// ErrNondeterministic: the runs fell into more than one class.
	ErrNondeterministic = errors.New("nondeterministic")
	// ErrBroken: every run failed the same way.
	ErrBroken = errors.New("broken")
	// errRunFailed: at least one run failed.
	errRunFailed = errors.New("run failed")
	// errLeak: a run left goroutines running.
	errLeak = errors.New("goroutine leak")
	// errBelowFloor: fewer runs than Config.Floor were made.
	errBelowFloor = errors.New("fewer runs than the floor")
)

func (r *Report) noteProcs(p int) {
	if i, found := slices.BinarySearch(r.GOMAXPROCS, p); !found {
		r.GOMAXPROCS = slices.Insert(r.GOMAXPROCS, i, p)
	}
}

// OK reports whether the gate passed (a skipped scenario passes).
func (r *Report) OK() bool { return r.Err() == nil }

// Err returns nil when the gate passed, else an error with a one-line
// reason for each condition that applies (several classes, a reproducible
// failure, failed runs, leaks, fewer runs than the floor); it wraps
// ErrNondeterministic or ErrBroken with the verdict. The full story is in Text.
func (r *Report) Err() error {
	if r.Verdict == gate.Skipped {
		return nil
	}
	var errs []error
	switch r.Verdict {
	case gate.Nondeterministic:
		errs = append(errs, fmt.Errorf("%w: scenario %s: %d runs fell into %d classes (%s)", ErrNondeterministic, r.Scenario, r.Runs, len(r.Classes), r.classSizes()))
	case gate.Broken:
		c := r.Classes[0]
		errs = append(errs, fmt.Errorf("%w: scenario %s: all %d runs failed the same way (%s): %s", ErrBroken, r.Scenario, r.Runs, c.ErrorKind, firstLine(c.Message)))
	}
	for i, c := range r.Classes {
		if c.ErrorKind != "" {
			errs = append(errs, fmt.Errorf("%w: scenario %s class %d (%d runs, first run %d): %s", errRunFailed, r.Scenario, i+1, c.Runs, c.FirstRun, firstLine(c.Message)))
		}
		if c.ErrorKind == errorKindLeak {
			errs = append(errs, fmt.Errorf("%w: scenario %s: %d runs left goroutines running", errLeak, r.Scenario, c.Runs))
		}
	}
	if r.Runs < r.Floor && !r.FailedFast {
		why := "the time budget ran out"
		if r.Cancelled != "" {
			why = r.Cancelled
		}
		errs = append(errs, fmt.Errorf("%w: scenario %s made %d runs, floor is %d: %s; speed the scenario up or raise Budget, never lower the floor to pass", errBelowFloor, r.Scenario, r.Runs, r.Floor, why))
	}
	return errors.Join(errs...)
}

// classSizes renders class sizes as "27+23", or, for more than eight
// classes, summarised: "20+5+25 classes of 1 run".
func (r *Report) classSizes() string { return strings.Join(r.ClassSizes(), "+") }

// Summary is one line: verdict, runs, classes, digests, wall time.
func (r *Report) Summary() string {
	if r.Verdict == gate.Skipped {
		return fmt.Sprintf("harness SKIPPED %s: %s", r.Scenario, r.Skipped)
	}
	v := string(r.Verdict)
	if v == "" {
		v = "NO VERDICT"
	}
	if v == string(gate.Pass) && !r.OK() {
		v = "FAIL"
	}
	s := fmt.Sprintf("harness %s %s: %d/%d runs (%d in child processes), %d class(es) %s, %d events, output %s, chain %s, GOMAXPROCS %s, %v",
		v, r.Scenario, r.Runs, r.Iterations, r.ProcessRuns, len(r.Classes), r.classSizes(), r.Events,
		excerpt.Digest(r.OutputDigest), excerpt.Digest(r.ChainDigest), procsText(r.GOMAXPROCS), r.Wall.Round(time.Microsecond))
	if r.BudgetExceeded {
		s += fmt.Sprintf(" — BUDGET EXCEEDED (%v): only %d of %d iterations ran", r.Budget, r.Runs, r.Iterations)
	}
	return s
}

func procsText(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}
