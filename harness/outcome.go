package harness

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/childproc"
)

// Error kinds: the third part of a class's identity (Class.ErrorKind). A
// run that succeeded has kind "". Only ErrorKindCassetteMiss is exported:
// it is the kind a caller acts on (by re-recording the cassette); the
// others are the strings listed here.
const (
	ErrorKindCassetteMiss   = "cassette-miss"   // a request the cassette did not record, or the cassette exhausted
	errorKindCredentials    = "credentials"     // a miss on a cloud credential or metadata service: the SDK found no credentials
	errorKindAPIVersion     = "api-version"     // every miss differs from its recording only in the API version its SDK sends
	errorKindCassetteUnused = "cassette-unused" // recorded interactions left unused
	errorKindCassetteAbsent = "cassette-absent" // the cassette file does not exist
	errorKindCassette       = "cassette"        // the cassette could not be opened or verified
	errorKindPanic          = "panic"           // the scenario panicked
	errorKindDeadlock       = "deadlock"        // every goroutine of the run blocked
	errorKindHung           = "hung"            // the run outlived Config.RunTimeout
	errorKindLeak           = "leak"            // the run left goroutines running
	errorKindCanceled       = "canceled"        // the run's context was cancelled
	errorKindChild          = "child"           // a child process crashed, hung or answered garbage (see childproc.Error)
	errorKindPin            = "pin-conflict"    // a name pinned to two values
	errorKindError          = "error"           // any other error, followed by its Go type
)

// outcome is one run as the harness keeps it, made in the test process or
// in a child.
type outcome struct {
	iter     int
	procs    int
	proc     *Process // nil for a run in the test process
	output   []byte
	tape     []events.Event
	pin      map[string]string
	requests []sentRequest
	errText  string
	errKind  string
	leaks    []Goroutine
	// ownErr is the text of the error the scenario returned, without
	// what the run met besides (masked; "" for none).
	ownErr string
}

// setErr records err (nil is no error) and its kind.
func (o *outcome) setErr(err error) {
	if err == nil {
		return
	}
	o.errText = maskText(relativeText(err.Error()))
	o.errKind = errorKind(err)
}

// errorKind classifies a run's error; see the ErrorKind constants.
func errorKind(err error) string {
	var ce *childproc.Error
	var pe *panicError
	switch {
	case errors.As(err, &ce):
		return errorKindChild
	case errors.As(err, &pe):
		return errorKindPanic
	case errors.Is(err, cassettes.ErrInteractionNotFound):
		return ErrorKindCassetteMiss
	case errors.Is(err, cassettes.ErrUnusedInteractions):
		return errorKindCassetteUnused
	case errors.Is(err, errDeadlock):
		return errorKindDeadlock
	case errors.As(err, new(*hungError)):
		return errorKindHung
	case errors.Is(err, errPinConflict):
		return errorKindPin
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorKindCanceled
	}
	if errors.Is(err, cassettes.ErrCassetteNotFound) {
		return errorKindCassetteAbsent
	}
	var cerr *cassettes.CassetteError
	if errors.As(err, &cerr) {
		return errorKindCassette
	}
	return fmt.Sprintf("%s (%T)", errorKindError, innermost(err))
}

// reRecordFixes reports whether recording the cassettes again is the
// answer when every run failed with error kind k: the requests changed
// (a miss, the SDK's API version, or interactions left unused) or the
// cassette does not exist.
func reRecordFixes(k string) bool {
	return k == ErrorKindCassetteMiss || k == errorKindAPIVersion || k == errorKindCassetteUnused || k == errorKindCassetteAbsent
}

// innermost follows Unwrap to the error at the bottom of a chain of
// single wraps.
func innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// panicError is a scenario's panic with its stack.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.value, e.stack) }

// errDeadlock marks a run whose goroutines all blocked.
var errDeadlock = errors.New("deadlock")

// runScenario is the body of one run in the test process: perturb the
// schedule, run the scenario under a fresh context, cancel it, wait for
// the perturbing goroutines and close the run's cassettes. Panics become
// errors.
func runScenario(ctx context.Context, rc *resolved, iter, procs int, bubble bool, s Scenario) (o outcome) {
	o = outcome{iter: iter, procs: procs}
	run := newRun(iter, bubble, rc)
	ictx, cancel := context.WithCancel(ctx)
	wait := func() {}
	if !rc.NoPerturb {
		wait = perturbSchedule(iter)
	}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				//detvet:ignore a panic's stack is shown for diagnosis; classes compare the error kind, not the text
				err = &panicError{value: r, stack: debug.Stack()}
			}
		}()
		o.output, err = s(ictx, run)
	}()
	cancel()
	wait()
	if err != nil {
		o.ownErr = maskText(relativeText(err.Error()))
	}
	tape, pin, reqs, misses, err := run.finish(err)
	o.tape, o.pin, o.requests = tape, pin, reqs
	o.setErr(err)
	o.setMisses(misses)
	return o
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
