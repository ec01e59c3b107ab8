package harness

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
)

// Defaults for a zero Config.
const (
	defaultIterations = 50
	defaultFloor      = 20
	// defaultProcesses is the number of runs Check makes in child
	// processes of the test binary when Config.Processes is 0.
	defaultProcesses = 4
	// defaultMaxProcs is the highest GOMAXPROCS of the default schedule
	// (1, 2, ..., max(defaultMaxProcs, NumCPU)). GOMAXPROCS above the core
	// count still gives the scheduler more Ps to run goroutines on, so
	// completion orders vary more than on the cores alone.
	defaultMaxProcs = 8
	// defaultChildTimeout bounds one child process when Config.Budget is 0.
	defaultChildTimeout = 2 * time.Minute
)

// AllowEntry is one field allowed to differ between runs, with the reason
// it may. Field is an Event struct field name accepted by
// events.FieldByName; stripping zeroes that field of every event before
// comparison. There are no patterns and no text rewriting: every other
// field is compared.
type AllowEntry struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// DefaultAllowlist is the allowlist of a Config whose Allowlist is nil:
// the two nondeterministic Event fields, each with its reason.
func DefaultAllowlist() []AllowEntry {
	return []AllowEntry{
		{Field: "EmittedAt", Reason: "wall-clock timestamp stamped by the injected clock; clock-derived, differs every run by design"},
		{Field: "AuditEventID", Reason: "fresh audit-event ID per event from the injected ID source (uuid4 in production)"},
	}
}

// Config configures a gate run; its methods Check and Iterate run one.
// The zero value is ready to use: 50 runs, a floor of 20 runs,
// no time budget, DefaultAllowlist, 4 runs in child
// processes (Check only), the default GOMAXPROCS schedule and the test's
// artifact directory.
type Config struct {
	// Iterations is the number of runs to make; 0 means 50.
	Iterations int
	// Floor is the minimum number of runs for a verdict; 0 means
	// 20. Fewer runs (because the budget ran out or the context
	// was cancelled) is a failure, never a pass.
	Floor int
	// Budget caps the wall time of the runs; 0 means none. When it is
	// exceeded no further run starts, a child process still running is
	// killed and reported as a failed run, and the report says so.
	Budget time.Duration
	// FailFast stops at the first run whose outcome differs from run 0's,
	// for quick local iteration. By default every run is made, so the
	// report can say how the outcomes are distributed.
	FailFast bool
	// Processes is the number of runs Check makes in child processes of
	// the test binary, each with a perturbed environment (see the package
	// documentation); 0 means 4, a negative value none.
	// Iterate, which has no test binary to rerun, makes none.
	Processes int
	// RunTimeout bounds one run in the test process, in real time; 0
	// means 2 minutes, a negative value no bound. Under Check the
	// bound also ends some time before go test's -timeout would kill the
	// test binary. A run past it fails as hung (error kind "hung") with its
	// goroutines' stacks, no further run is started, and the gate still
	// writes its report and result. A run's goroutines cannot be stopped
	// from outside (Iterate cancels the run's context): they are left
	// running. (A run whose goroutines all block durably inside its
	// synctest bubble fails at once as deadlocked; one blocked on I/O, a
	// system call or a lock is not durably blocked, and only this bound
	// ends it.)
	RunTimeout time.Duration
	// ProcessPerRun makes every run in a child process of the test binary
	// (Check only; Processes is then ignored), except run 0 under the
	// cassettes record switch, which records in the test process. A
	// panic in a goroutine the scenario started, which no recover in the
	// harness can catch, kills the process it happens in: in the test
	// process it ends the whole test binary without a report, in a child
	// it fails that run, naming the child. Use it for a scenario that
	// may panic that way; each run then costs a process start.
	ProcessPerRun bool
	// ChildTimeout bounds one child process; 0 means Budget, or
	// 2 minutes when there is no budget. A child that runs
	// longer is killed and its run fails.
	ChildTimeout time.Duration
	// Allowlist names the Event fields allowed to differ. nil means
	// DefaultAllowlist; an empty non-nil slice compares every field. Every
	// entry needs a Reason.
	Allowlist []AllowEntry
	// ConfigVars names the environment variables held as configuration:
	// child processes keep the test process's values of those the
	// scenario reads instead of setting them to other values, and the
	// report names them once ("not varied: configuration"). nil means
	// DefaultConfigVars (the official SDKs' client configuration); an
	// empty non-nil slice varies every variable read. Add or remove
	// entries as with Allowlist; every entry needs a Reason. A variable
	// the pipeline itself reads to decide what to do is an input: leave
	// it out, so a child varies it and the report names it when it
	// changes the outcome. Holding HOME (USERPROFILE on Windows) or PATH
	// keeps children from getting a fresh home or an extra PATH entry.
	ConfigVars []ConfigVar
	// Recorder configures the recorder each Run hands out (clock and ID
	// source of the allowlisted fields). The zero value leaves them empty.
	Recorder events.Config
	// Cassette is the Config of the cassettes Run.Client opens:
	// RealTransport (what the first run records through when the test flag
	// -cassettes.record selects a cassette; see cassettes.Redirect for a
	// local fake), APIKey, AllowUnused, Manifest and Hint (the command the
	// report names to re-record; in Check, empty means the test's own go
	// test line with the record flag; the cassettes' own errors name
	// none, and the report renders their misses itself). Mode and
	// ReplayOnly are the harness's: under the record switch the first run
	// records and every other run replays what it recorded, and the
	// recording is kept only when the gate then passes (otherwise the
	// earlier cassette, or none, is put back and the report says why).
	Cassette cassettes.Config
	// Latency is the fake time a response served by a Run's client takes
	// inside a synctest bubble, for the call-th response (0-based) of run
	// run, given the duration the recording measured for it (0 when the
	// cassette has none). For an event stream it is the time to its last
	// frame: the recorded frame offsets are scaled to it. nil means the
	// default: the recorded duration scaled by a factor between
	// 0.5 and 2 that differs between runs and calls, so a timeout, deadline
	// or elapsed-time cap that production could hit is hit in some runs,
	// and a measured latency that reaches the output differs between runs.
	// A Latency that returns recorded replays the recorded timing
	// exactly. Outside a bubble responses are served at once: the harness
	// never sleeps in real time.
	Latency func(run, call int, recorded time.Duration) time.Duration
	// ArtifactDir is where the evidence of a failure is written. In Check,
	// "" means -gate.evidence, else t.ArtifactDir() under go test
	// -artifacts, else a directory of the test's own under the user's
	// cache directory, which outlives the test (see the package
	// documentation); in Iterate, a new directory under
	// os.TempDir().
	ArtifactDir string
	// ReproCommand is the exact command that reproduces a failure, run
	// from the module root. In Check, "" means the current test's own go
	// test command of the test, from the module root.
	ReproCommand string
	// Procs is the GOMAXPROCS schedule: run i uses Procs[i%len(Procs)].
	// nil means 1, 2, ..., max(8, NumCPU). GOMAXPROCS is
	// restored when the runs end.
	Procs []int
	// NoPerturb turns off the scheduling perturbation (yielding goroutines
	// and yields before the scenario, different for every run). Only the
	// overhead benchmark should need it.
	NoPerturb bool
	// AssignByLane makes the answer to identical concurrent requests
	// deterministic. When several recorded interactions match one
	// request, a Run's client by default serves the first one not yet
	// served, so which goroutine gets which answer depends on the order
	// the requests arrive in; the report then names, per lane, the
	// interaction each class got. With AssignByLane, a request sent with
	// a lane's context (events.Lane.Context) gets the interaction its
	// lane's rank gives it: see Identical requests in the cassettes
	// package documentation.
	AssignByLane bool
	// Now reads the clock used for the budget and wall time. nil means
	// time.Now.
	Now func() time.Time
}

// errInvalidConfig is wrapped by every configuration error.
var errInvalidConfig = errors.New("invalid harness config")

// resolved is a validated Config with defaults applied, and the state of
// one gate the runs share.
type resolved struct {
	Config
	strip events.Field
	// test is the name of the test running the gate ("" under Iterate).
	test string
	// opened is the cassettes the gate's runs opened, and whether a test
	// flag made the first opening record.
	opened *openedCassettes
	// repro is the command that reproduces a failure; nil for none.
	repro *gate.Command
	// chunks cuts the replayed bodies of the runs in the test process;
	// nil (a child process) delivers them as recorded.
	chunks *chunkState
	// latency notes which runs of the test process replayed latency, and
	// lets one be made again with another run's; nil in a child process.
	latency *latencyState
}

// openedCassettes records, per cassette path, whether its first opening
// in the gate recorded it.
type openedCassettes struct {
	mu    sync.Mutex
	paths map[string]bool
	// recorders are the cassettes whose first opening recorded, kept
	// only if the gate passes; refused says, by path, why a recording was
	// not saved (its Close failed: it met an error, captured nothing or
	// held a secret).
	recorders map[string]*cassettes.Cassette
	refused   map[string]string
}

func (c Config) resolve() (resolved, error) {
	r := resolved{Config: c, opened: &openedCassettes{paths: map[string]bool{}}}
	if r.Iterations == 0 {
		r.Iterations = defaultIterations
	}
	if r.Floor == 0 {
		r.Floor = defaultFloor
	}
	if r.Processes == 0 {
		r.Processes = defaultProcesses
	}
	r.Processes = max(r.Processes, 0)
	switch {
	case r.Iterations < 0:
		return r, fmt.Errorf("%w: Iterations is %d; set it to a positive count or 0 for %d", errInvalidConfig, c.Iterations, defaultIterations)
	case r.Floor < 1:
		return r, fmt.Errorf("%w: Floor is %d; set it to at least 1 or 0 for %d", errInvalidConfig, c.Floor, defaultFloor)
	case r.Iterations < r.Floor:
		return r, fmt.Errorf("%w: Iterations (%d) is below Floor (%d); a run count under the floor can never pass, raise Iterations", errInvalidConfig, r.Iterations, r.Floor)
	case r.Budget < 0:
		return r, fmt.Errorf("%w: Budget is %v; use 0 for no budget", errInvalidConfig, c.Budget)
	case r.ChildTimeout < 0:
		return r, fmt.Errorf("%w: ChildTimeout is %v; use 0 for the default", errInvalidConfig, c.ChildTimeout)
	}
	// Run 0 always runs in the test process.
	r.Processes = min(r.Processes, r.Iterations-1)
	if err := r.resolveAllowlist(); err != nil {
		return r, err
	}
	if err := r.resolveConfigVars(); err != nil {
		return r, err
	}
	if r.Procs == nil {
		for p := 1; p <= max(runtime.NumCPU(), defaultMaxProcs); p++ {
			r.Procs = append(r.Procs, p)
		}
	}
	for i, p := range r.Procs {
		if p < 1 {
			return r, fmt.Errorf("%w: Procs[%d] is %d; GOMAXPROCS must be at least 1", errInvalidConfig, i, p)
		}
	}
	if len(r.Procs) == 0 {
		return r, fmt.Errorf("%w: Procs is empty; leave it nil for the default schedule", errInvalidConfig)
	}
	if r.ChildTimeout == 0 {
		r.ChildTimeout = r.Budget
		if r.ChildTimeout == 0 {
			r.ChildTimeout = defaultChildTimeout
		}
	}
	if r.RunTimeout == 0 {
		r.RunTimeout = defaultRunTimeout
	}
	if r.Latency == nil {
		r.Latency = defaultLatency
	}
	if r.Now == nil {
		//detvet:ignore the default of Config.Now, which a caller injects
		r.Now = time.Now
	}
	if r.ReproCommand != "" {
		c := command(hint.PurposeReproduce, r.ReproCommand)
		r.repro = &c
	}
	return r, nil
}

func (r *resolved) resolveAllowlist() error {
	if r.Allowlist == nil {
		r.Allowlist = DefaultAllowlist()
	}
	for i, e := range r.Allowlist {
		f, err := events.FieldByName(e.Field)
		if err != nil {
			return fmt.Errorf("%w: Allowlist[%d]: %w", errInvalidConfig, i, err)
		}
		if strings.TrimSpace(e.Reason) == "" {
			return fmt.Errorf("%w: Allowlist[%d] (%s) has no Reason; every allowed difference must say why it is allowed", errInvalidConfig, i, e.Field)
		}
		if r.strip&f != 0 {
			return fmt.Errorf("%w: Allowlist[%d] repeats %s", errInvalidConfig, i, e.Field)
		}
		r.strip |= f
	}
	return nil
}

// defaultLatency is the latency of a replayed response when
// Config.Latency is nil: the recorded duration times a factor from 0.5 to
// just under 2, which differs between runs and between the calls of one
// run (997 steps); for a recording without a duration, between 1 ms and
// about 1 s.
func defaultLatency(run, call int, recorded time.Duration) time.Duration {
	h := (run*7919 + call*104729) % 997
	if recorded <= 0 {
		return time.Duration(h+1) * time.Millisecond
	}
	return recorded/2 + time.Duration(float64(recorded)*1.5*float64(h)/997)
}

// childIterations returns the iterations Check makes in child processes:
// n of them, evenly spread over 1..iterations-1.
func childIterations(iterations, n int) map[int]bool {
	out := make(map[int]bool, n)
	for j := range n {
		out[(j+1)*iterations/(n+1)] = true
	}
	return out
}

// recorded returns the cassette paths whose first opening recorded.
func (o *openedCassettes) recorded() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for p, rec := range o.paths {
		if rec {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// noteRecorder keeps c, a first opening of path that records.
func (o *openedCassettes) noteRecorder(path string, c *cassettes.Cassette) {
	if o.recorders == nil {
		o.recorders = map[string]*cassettes.Cassette{}
	}
	o.recorders[path] = c
}

// noteClosed notes the error of closing c: a recording whose Close
// failed was not saved.
func (o *openedCassettes) noteClosed(c *cassettes.Cassette, err error, keys ...string) {
	if err == nil || c.Mode() != cassettes.Record {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for p, r := range o.recorders {
		if r == c {
			if o.refused == nil {
				o.refused = map[string]string{}
			}
			o.refused[p] = maskText(err.Error(), keys...)
		}
	}
}

// saved returns the cassette paths whose first opening recorded and
// saved the recording.
func (o *openedCassettes) saved() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for p := range o.recorders {
		if _, ok := o.refused[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// keepIfPassed keeps the cassettes run 0 recorded and saved when the
// gate passed, and otherwise discards each recording (the earlier
// cassette, or none, is back). It returns what the report says of the
// recordings not kept: refused when saving, or discarded.
func (o *openedCassettes) keepIfPassed(rep *Report) string {
	failed := rep.Err() != nil
	o.mu.Lock()
	defer o.mu.Unlock()
	var lines []string
	for _, p := range slices.Sorted(maps.Keys(o.recorders)) {
		if why, ok := o.refused[p]; ok {
			lines = append(lines, fmt.Sprintf("run 0 recorded %s (the record switch selected it), but the recording was not saved: %s; every run replayed what was there before", p, why))
			continue
		}
		if !failed {
			continue
		}
		if err := o.recorders[p].Discard(); err != nil {
			lines = append(lines, fmt.Sprintf("the recording of %s was not kept, but could not be discarded: %v", p, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("the recording of %s was not kept: the replay gate that followed it did not pass (%s), so %s is back as it was before recording; a recording is kept only when its gate passes", p, rep.Verdict, p))
	}
	return strings.Join(lines, "\n")
}

// list returns the cassette paths the gate's runs opened.
func (o *openedCassettes) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(maps.Keys(o.paths))
}
