package harness

import (
	"context"
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
	"github.com/codegenie/codegenie/internal/gateflags"
)

// Check runs the gate on s with the zero Config (see Config.Check): 50
// runs, 4 of them in child processes with a perturbed environment, each
// run in its own synctest bubble. It fails t with the full report unless
// every run gave the same outcome.
func Check(t testing.TB, name string, s Scenario) *Report {
	t.Helper()
	return Config{}.Check(t, name, s)
}

// Check is Iterate for tests: it runs the gate and marks t failed (t.Error)
// with the full report unless the verdict is Pass over at least the floor;
// on success it logs a one-line summary. It returns the report either way;
// a configuration error stops the test (t.Fatal) and returns nil.
//
// When t is a *testing.T every run in this process executes in its own
// testing/synctest bubble: time inside is a fake clock, set to a different
// instant for each run, replayed responses take a run-dependent amount of
// fake time, and a goroutine the run leaves blocked fails that run, with
// its stack. The scenario must therefore not use real network I/O (use
// Run.Client or an in-process transport) and must not call t.Run or
// t.Parallel. c.Processes runs are made in child processes of the test
// binary, rerunning this test alone (see the package documentation); a
// test that calls Check twice must give each call its own name. Any other
// testing.TB (a *testing.B, say) gets Iterate's isolation and no child
// processes.
//
// Under the gate flags (see package gate) Check skips a scenario of
// another shard (a Skipped report) and writes its result file; it
// appends nothing to a ledger (cmd/gate-merge -ledger does, from the
// result files), and fails under -gate.ledger, saying so.
func (c Config) Check(t testing.TB, name string, s Scenario) *Report {
	t.Helper()
	return c.check(t, name, s, true)
}

// check is Check; with fail false it does not mark t failed (the
// harness's own tests of failing gates).
func (c Config) check(t testing.TB, name string, s Scenario, fail bool) *Report {
	t.Helper()
	if spec, err := childproc.Self(); err != nil {
		t.Fatal(err)
	} else if spec != nil {
		return c.checkAsChild(t, spec, name, s)
	}
	rc, err := c.resolve()
	if err != nil {
		t.Fatalf("harness.Check %s: %v", name, err)
		return nil
	}
	if rc.repro == nil {
		repro := reproCommand(t)
		rc.repro = &repro
	}
	rc.test = t.Name()
	gf, err := gateflags.Get()
	if err != nil {
		t.Fatal(err)
		return nil
	}
	if gf.Ledger != "" {
		t.Fatalf("harness: -gate.ledger=%s: a test process appends nothing to a ledger; write the results with -gate.results=DIR and append them with %s", gf.Ledger, gateflags.AppendCommand)
		return nil
	}
	noteLedgerEnv(t)
	rep := newReport(&rc, name)
	rep.Test = t.Name()
	rep.Dir, rep.ImportPath = packageOf()
	rep.Package = moduleDir(rep.Dir)
	rep.Shard = gf.Shard.String()
	if skip := gf.Shard.Skip(name); skip != "" {
		rep.Verdict, rep.Skipped = gate.Skipped, skip
		finishCheck(t, gf, rep)
		t.Logf("%s", rep.Summary())
		shardChecks.note(t, false)
		return rep
	}
	shardChecks.note(t, true)
	e := c.checkEnv(t, &rc, name, s)
	var cw *crashWatch
	if gf.Results != "" {
		cw = newCrashWatch(gf.Results, rep)
		e.run = cw.wrap(e.run)
	}
	iterate(t.Context(), &rc, rep, s, e)
	if cw != nil {
		if err := cw.end(); err != nil {
			t.Errorf("%v", err)
		}
	}
	finishCheck(t, gf, rep)
	if err := rep.Err(); err != nil && fail {
		t.Errorf("%s", rep.String())
		return rep
	}
	if rep.BudgetExceeded && fail {
		t.Logf("%s", rep)
		return rep
	}
	t.Logf("%s", rep.Summary())
	return rep
}

// checkEnv sets up the isolation Check gives t.
func (c Config) checkEnv(t testing.TB, rc *resolved, name string, s Scenario) env {
	e := env{artifactDir: func() (string, error) { return testEvidenceDir(t) }}
	tt, ok := t.(*testing.T)
	if !ok {
		lw := newLeakWatcher()
		e.isolation = "goroutine per run (leaks found with goleak)"
		e.run = func(ctx context.Context, iter, procs int) outcome { return lw.run(ctx, rc, iter, procs, s) }
		return e
	}
	b := newBubbleRunner(tt, rc, s)
	e.isolation = "synctest bubble per run"
	e.run = b.run
	if rc.Processes > 0 {
		kids, err := childproc.NewRunner(tt.Name(), name, tt.TempDir, rc.ChildTimeout)
		if err != nil {
			t.Fatalf("harness.Check %s: %v", name, err)
		}
		e.children = kids
		e.isolation += "; child processes of the test binary, perturbed"
	}
	return e
}

// shardChecks counts, per test, the Checks it ran and those another
// shard runs.
var shardChecks = &checkCounts{tests: map[testing.TB]*checkCount{}}

type checkCounts struct {
	mu    sync.Mutex
	tests map[testing.TB]*checkCount
}

type checkCount struct{ ran, skipped int }

// note counts one Check of t; at its first, it registers the cleanup that
// reports t as skipped (t.Skip) when every one of its Checks belonged to
// another shard, so go test says SKIP rather than PASS for a scenario
// this shard never ran.
func (cc *checkCounts) note(t testing.TB, ran bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	c, ok := cc.tests[t]
	if !ok {
		c = &checkCount{}
		cc.tests[t] = c
		t.Cleanup(func() {
			cc.mu.Lock()
			delete(cc.tests, t)
			skip := c.ran == 0 && c.skipped > 0
			cc.mu.Unlock()
			if skip {
				t.Skipf("harness: every scenario of this test belongs to another shard (-gate.shard)")
			}
		})
	}
	if ran {
		c.ran++
	} else {
		c.skipped++
	}
}

// ledgerEnvNoted makes noteLedgerEnv log once per process.
var ledgerEnvNoted sync.Once

// noteLedgerEnv logs, at the first Check of a process whose environment
// sets CODEGENIE_LEDGER, that a test process does not read it. It is the
// DSN of the ledger command and of the CI recipes' merge jobs, which a
// CI may hand every job (GitLab's CI/CD variables), so it is no error.
func noteLedgerEnv(t testing.TB) {
	//detvet:ignore whether the environment names a ledger only chooses a log line
	if os.Getenv(gateflags.EnvLedger) == "" {
		return
	}
	ledgerEnvNoted.Do(func() {
		t.Logf("harness: %s is set, but a test process appends nothing to a ledger: append the results of -gate.results=DIR with %s", gateflags.EnvLedger, gateflags.AppendCommand)
	})
}

// artifactsKept reports whether go test was run with -artifacts, which
// keeps t.ArtifactDir() after the test.
func artifactsKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}
