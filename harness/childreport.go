package harness

import (
	"fmt"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/childproc"
	"github.com/codegenie/codegenie/internal/tape"
)

// childReport is the report a child process writes of its run (the
// child protocol is package childproc's; this is what the run gave).
type childReport struct {
	childproc.Header
	Output    []byte            `json:"output"`
	Tape      []byte            `json:"tape"`
	Pin       map[string]string `json:"pin,omitempty"`
	Requests  []sentRequest     `json:"requests,omitempty"`
	Error     string            `json:"error,omitempty"`
	ErrorKind string            `json:"error_kind,omitempty"`
	Leaks     []Goroutine       `json:"leaks,omitempty"`
	Observed  Process           `json:"observed"`

	events []events.Event // Tape, decoded by Check
}

// newChildReport is the report of o, made in a child started with spec.
func newChildReport(spec *childproc.Spec, o *outcome) *childReport {
	return &childReport{
		Header: spec.Header(),
		Output: o.output, Tape: tape.Append(nil, o.tape), Pin: o.pin, Requests: o.requests,
		Error: o.errText, ErrorKind: o.errKind, Leaks: o.leaks, Observed: observe(spec.Run),
	}
}

// Check verifies what a child reported: an error kind the harness gives
// with each error, a well-formed tape, and a leak's goroutines.
func (r *childReport) Check() error {
	if r.Error == "" && r.ErrorKind != "" || r.Error != "" && !knownErrorKind(r.ErrorKind) {
		return fmt.Errorf("error kind %q does not go with error %q", r.ErrorKind, firstLine(r.Error))
	}
	evs, err := tape.Read(r.Tape)
	if err != nil {
		return fmt.Errorf("tape: %w", err)
	}
	if r.ErrorKind == errorKindLeak && len(r.Leaks) == 0 {
		return fmt.Errorf("a leak without goroutines")
	}
	r.events = evs
	return nil
}

// fill sets o from a report that passed Check.
func (r *childReport) fill(o *outcome) {
	o.output, o.tape, o.pin, o.requests = r.Output, r.events, r.Pin, r.Requests
	o.errText, o.errKind, o.leaks = r.Error, r.ErrorKind, r.Leaks
	p := r.Observed
	p.Run = o.iter
	o.proc = &p
}

// knownErrorKind reports whether k is an error kind the harness gives.
func knownErrorKind(k string) bool {
	switch k {
	case ErrorKindCassetteMiss, errorKindCredentials, errorKindAPIVersion, errorKindCassetteUnused, errorKindCassetteAbsent, errorKindCassette, errorKindPanic, errorKindDeadlock,
		errorKindLeak, errorKindCanceled, errorKindChild, errorKindPin, errorKindHung:
		return true
	}
	return strings.HasPrefix(k, errorKindError+" (") && strings.HasSuffix(k, ")") && len(k) < 512
}
