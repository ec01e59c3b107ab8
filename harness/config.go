package harness

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/codegenie/codegenie/events"
)

// Defaults for a zero Config.
const (
	DefaultIterations = 50
	DefaultFloor      = 20
	// DefaultLeakGrace is how long Iterate waits, outside a synctest
	// bubble, for goroutines started by an iteration to exit after its
	// context is cancelled before it reports them as leaked.
	DefaultLeakGrace = 250 * time.Millisecond
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
// the three nondeterministic Event fields, each with its reason. It is the
// contract test's allowlist (seed S6-07, acceptance criterion 4).
func DefaultAllowlist() []AllowEntry {
	return []AllowEntry{
		{Field: "EmittedAt", Reason: "wall-clock timestamp stamped by the injected clock; clock-derived, differs every run by design"},
		{Field: "AuditEventID", Reason: "fresh audit-event ID per event from the injected ID source (uuid4 in production)"},
		{Field: "BudgetTokenID", Reason: "budget reservation token minted per precharge (uuid4 in production)"},
	}
}

// Config configures a gate run. The zero value runs DefaultIterations with
// DefaultFloor, no time budget, DefaultAllowlist, and (in Check) the test's
// artifact directory.
type Config struct {
	// Iterations is the number of runs to make; 0 means DefaultIterations.
	Iterations int
	// Floor is the minimum number of runs for a verdict; 0 means
	// DefaultFloor. Fewer runs (because the budget ran out or the context
	// was cancelled) is a failure wrapping ErrBelowFloor, never a pass.
	Floor int
	// Budget caps the wall time of the iterations; 0 means none. When it is
	// exceeded, no further iteration starts and the report says so, with
	// the number of runs actually made.
	Budget time.Duration
	// Allowlist names the Event fields allowed to differ. nil means
	// DefaultAllowlist; an empty non-nil slice compares every field. Every
	// entry needs a Reason.
	Allowlist []AllowEntry
	// ArtifactDir is where the evidence of a divergence is written. In
	// Check, "" means t.ArtifactDir(); in Iterate, "" means a new directory
	// under os.TempDir().
	ArtifactDir string
	// ReproCommand is the exact command that reproduces a failure. In Check,
	// "" means a go test command derived from the test name and package.
	ReproCommand string
	// Procs is the GOMAXPROCS schedule: run i uses Procs[i%len(Procs)].
	// nil means 1, 2, ..., max(NumCPU, 2). GOMAXPROCS is restored when the
	// runs end.
	Procs []int
	// NoPerturb turns off the scheduling perturbation (yielding goroutines
	// and yields before the scenario, different for every run). Only the
	// overhead benchmark should need it.
	NoPerturb bool
	// LeakGrace overrides DefaultLeakGrace.
	LeakGrace time.Duration
	// Now reads the clock used for the budget and wall time. nil means
	// time.Now.
	Now func() time.Time
}

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("invalid harness config")

// resolved is a validated Config with defaults applied.
type resolved struct {
	Config
	strip events.Field
}

func (c Config) resolve() (resolved, error) {
	r := resolved{Config: c}
	if r.Iterations == 0 {
		r.Iterations = DefaultIterations
	}
	if r.Floor == 0 {
		r.Floor = DefaultFloor
	}
	switch {
	case r.Iterations < 0:
		return r, fmt.Errorf("%w: Iterations is %d; set it to a positive count or 0 for %d", ErrInvalidConfig, c.Iterations, DefaultIterations)
	case r.Floor < 1:
		return r, fmt.Errorf("%w: Floor is %d; set it to at least 1 or 0 for %d", ErrInvalidConfig, c.Floor, DefaultFloor)
	case r.Iterations < r.Floor:
		return r, fmt.Errorf("%w: Iterations (%d) is below Floor (%d); a run count under the floor can never pass, raise Iterations", ErrInvalidConfig, r.Iterations, r.Floor)
	case r.Budget < 0:
		return r, fmt.Errorf("%w: Budget is %v; use 0 for no budget", ErrInvalidConfig, c.Budget)
	}
	if r.Allowlist == nil {
		r.Allowlist = DefaultAllowlist()
	}
	for i, e := range r.Allowlist {
		f, err := events.FieldByName(e.Field)
		if err != nil {
			return r, fmt.Errorf("%w: Allowlist[%d]: %w", ErrInvalidConfig, i, err)
		}
		if strings.TrimSpace(e.Reason) == "" {
			return r, fmt.Errorf("%w: Allowlist[%d] (%s) has no Reason; every allowed difference must say why it is allowed", ErrInvalidConfig, i, e.Field)
		}
		if r.strip&f != 0 {
			return r, fmt.Errorf("%w: Allowlist[%d] repeats %s", ErrInvalidConfig, i, e.Field)
		}
		r.strip |= f
	}
	if r.Procs == nil {
		n := max(runtime.NumCPU(), 2)
		for p := 1; p <= n; p++ {
			r.Procs = append(r.Procs, p)
		}
	}
	for i, p := range r.Procs {
		if p < 1 {
			return r, fmt.Errorf("%w: Procs[%d] is %d; GOMAXPROCS must be at least 1", ErrInvalidConfig, i, p)
		}
	}
	if len(r.Procs) == 0 {
		return r, fmt.Errorf("%w: Procs is empty; leave it nil for the default schedule", ErrInvalidConfig)
	}
	if r.LeakGrace == 0 {
		r.LeakGrace = DefaultLeakGrace
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r, nil
}
