package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/tape"
)

// childVar is the environment variable that makes a test binary a child
// of a gate: it holds the JSON of a childSpec.
const childVar = "CODEGENIE_HARNESS_CHILD"

// Format names of the child protocol.
const (
	childSpecFormat   = "codegenie-harness-child-spec/1"
	childReportFormat = "codegenie-harness-child-report/1"
)

// childSpec tells a child process which run to make and where to put it.
type childSpec struct {
	Format   string `json:"format"`
	Test     string `json:"test"`
	Scenario string `json:"scenario"`
	Run      int    `json:"run"`
	Procs    int    `json:"procs"`
	Out      string `json:"out"`
	Nonce    string `json:"nonce"`
	// Hostname and Domain are set when the child was started in a new UTS
	// namespace; UTS is the test process's namespace, so a child that
	// finds itself still in it never renames the machine.
	Hostname string `json:"hostname,omitempty"`
	Domain   string `json:"domain,omitempty"`
	UTS      string `json:"uts,omitempty"`
}

// childReport is what a child process writes to childSpec.Out.
type childReport struct {
	Format    string            `json:"format"`
	Nonce     string            `json:"nonce"`
	Test      string            `json:"test"`
	Scenario  string            `json:"scenario"`
	Run       int               `json:"run"`
	Output    []byte            `json:"output"`
	Tape      []byte            `json:"tape"`
	Pin       map[string]string `json:"pin,omitempty"`
	Requests  []sentRequest     `json:"requests,omitempty"`
	Error     string            `json:"error,omitempty"`
	ErrorKind string            `json:"error_kind,omitempty"`
	Leaks     []Goroutine       `json:"leaks,omitempty"`
	Observed  Process           `json:"observed"`
}

// testHookChildReport, when set (by the harness's own tests), rewrites
// the report a child writes.
var testHookChildReport func([]byte) []byte

var (
	childOnce sync.Once
	childSelf *childSpec
	childErr  error
)

// thisChild returns the spec this process was started with as a child of
// a gate, nil when it was not.
func thisChild() (*childSpec, error) {
	childOnce.Do(func() {
		//detvet:ignore the child's spec comes in its environment
		raw, ok := os.LookupEnv(childVar)
		if !ok {
			return
		}
		var s childSpec
		if err := json.Unmarshal([]byte(raw), &s); err != nil || s.Format != childSpecFormat {
			childErr = fmt.Errorf("harness: %s is set but is not a child spec of format %s (%v); unset it", childVar, childSpecFormat, err)
			return
		}
		childSelf = &s
	})
	return childSelf, childErr
}

// checkAsChild is Check in a child process. The Check the parent asked for
// makes its one run, writes the report and ends the test (t.SkipNow), so
// nothing after it in the test runs; any other Check returns a Skipped
// report at once.
func (c Config) checkAsChild(t testing.TB, spec *childSpec, name string, s Scenario) *Report {
	t.Helper()
	if t.Name() != spec.Test || name != spec.Scenario {
		return &Report{Scenario: name, Test: t.Name(), Verdict: Skipped, Skipped: "not the scenario this child process was started for"}
	}
	tt, ok := t.(*testing.T)
	if !ok {
		t.Fatalf("harness: child process for %s/%s: Check was not given a *testing.T", spec.Test, name)
		return nil
	}
	rc, err := c.resolve()
	if err != nil {
		t.Fatalf("harness.Check %s: %v", name, err)
		return nil
	}
	rc.test = t.Name()
	hostErr := setChildHostname(spec)
	b := newBubbleRunner(tt, &rc, s)
	o := b.run(t.Context(), spec.Run, spec.Procs)
	rep := childReport{
		Format: childReportFormat, Nonce: spec.Nonce, Test: spec.Test, Scenario: spec.Scenario, Run: spec.Run,
		Output: o.output, Tape: tape.Append(nil, o.tape), Pin: o.pin, Requests: o.requests,
		Error: o.errText, ErrorKind: o.errKind, Leaks: o.leaks, Observed: observe(spec.Run),
	}
	if hostErr != nil {
		rep.Observed.Hostname += " (not varied: " + hostErr.Error() + ")"
	}
	js, err := json.Marshal(rep)
	if testHookChildReport != nil {
		js = testHookChildReport(js)
	}
	if err == nil {
		err = atomicfile.WriteFile(spec.Out, js, 0o600)
	}
	if err != nil {
		t.Fatalf("harness: child process: write %s: %v", spec.Out, err)
	}
	t.SkipNow()
	return nil
}

// observe reads the values of the environment a child may have been given.
func observe(run int) Process {
	// The values below are observed, to name the variation that changes
	// an outcome; comparing them is their purpose.
	//detvet:ignore observed, as above
	p := Process{Run: run, PID: os.Getpid(), GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), TempDir: os.TempDir()}
	p.Dir, _ = os.Getwd()                                                                             //detvet:ignore observed, as above
	name, off := time.Now().Zone()                                                                    //detvet:ignore observed, as above
	p.Zone = fmt.Sprintf("%q (%s, UTC%+03d:%02d)", os.Getenv("TZ"), name, off/3600, abs(off%3600)/60) //detvet:ignore observed, as above
	p.Locale = fmt.Sprintf("LANG=%q LC_ALL=%q", os.Getenv("LANG"), os.Getenv("LC_ALL"))               //detvet:ignore observed, as above
	p.Hostname, _ = os.Hostname()                                                                     //detvet:ignore observed, as above
	observeMore(&p)
	return p
}

func abs(x int) int { return max(x, -x) }

// errNotNewUTS: the child was asked for a hostname but is still in the
// test process's UTS namespace.
var errNotNewUTS = errors.New("not in a new UTS namespace")
