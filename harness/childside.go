package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
)

// testHookChildReport, when set (by the harness's own tests), rewrites
// the report a child writes.
var testHookChildReport func([]byte) []byte

// checkAsChild is Check in a child process. The Check the parent asked for
// makes its one run, writes the report and ends the test (t.SkipNow), so
// nothing after it in the test runs; any other Check returns a Skipped
// report at once.
func (c Config) checkAsChild(t testing.TB, spec *childproc.Spec, name string, s Scenario) *Report {
	t.Helper()
	if t.Name() != spec.Test || name != spec.Scenario {
		return &Report{Outcome: gate.Outcome{Scenario: name, Test: t.Name(), Verdict: gate.Skipped, Skipped: "not the scenario this child process was started for"}}
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
	hostErr := spec.SetHostname()
	b := newBubbleRunner(tt, &rc, s)
	o := b.run(t.Context(), spec.Run, spec.Procs)
	rep := newChildReport(spec, &o)
	if hostErr != nil {
		rep.Observed.Hostname += " (not varied: " + hostErr.Error() + ")"
	}
	js, err := json.Marshal(rep)
	if testHookChildReport != nil {
		js = testHookChildReport(js)
	}
	if err == nil {
		err = spec.WriteReport(js)
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
	p.Domain = childproc.DomainName()
	p.Umask = childproc.UmaskText()
	//detvet:ignore the home whose SDK configuration a fresh home copies
	p.Home, _ = os.UserHomeDir()
	//detvet:ignore the test binary each child runs, linked to another path by design
	p.Executable, _ = os.Executable()
	return p
}

func abs(x int) int { return max(x, -x) }
