package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/ledger"
)

// goTest re-evaluates an entry by running its Go test through the gate in
// the module at dir:
//
//	go test PACKAGE -run '^Test$/^sub$' -count=1 -args -gate.results=TMP -gate.evidence=CACHE
//
// and reading the result the gate wrote for the entry's scenario. The
// package and the test come from the ledger, which is untrusted: the
// command is built by hint.GoTestRun, which refuses a package that is not
// ./DIR or an import path and a test that is not a Go test's name, and
// passes the test only as an anchored -run pattern. The
// runs of one test are shared by the entries that name it. The child does
// not inherit the gate's shard or results settings, so it does not skip
// the scenario.
type goTest struct {
	dir    string
	stderr io.Writer
	runs   map[string][]gate.Result // by package and test
}

func goTestEvaluator(dir string, stderr io.Writer) evaluateFunc {
	g := &goTest{dir: dir, stderr: stderr, runs: map[string][]gate.Result{}}
	return g.Evaluate
}

func (g *goTest) Evaluate(ctx context.Context, rec ledger.Entry) (ledger.Entry, error) {
	if rec.Test == "" || rec.Package == "" {
		return ledger.Entry{}, fmt.Errorf("entry %d records no test and package to rerun", rec.Seq)
	}
	key := rec.Package + "\x00" + rec.Test
	results, ok := g.runs[key]
	if !ok {
		var err error
		if results, err = g.runTest(ctx, rec.Package, rec.Test); err != nil {
			return ledger.Entry{}, err
		}
		g.runs[key] = results
	}
	for _, r := range results {
		if r.Test == rec.Test && r.Scenario == rec.Scenario {
			return ledger.Entry{Outcome: r.Resolved()}, nil
		}
	}
	var found []string
	for _, r := range results {
		found = append(found, r.Test+" "+r.Scenario)
	}
	run, _ := hint.GoTestRun("", rec.Package, rec.Test) // checked by runTest
	return ledger.Entry{}, fmt.Errorf("%s wrote no result for scenario %q (found: %v)", run, rec.Scenario, found)
}

func (g *goTest) runTest(ctx context.Context, pkg, test string) ([]gate.Result, error) {
	run, err := hint.GoTestRun("re-run the entry's test", pkg, test)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "ledger-rerun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// The results folder is removed once read: the evidence of a failing
	// gate goes where a gate keeps it outside a results folder.
	cmd := exec.CommandContext(ctx, run.Argv[0], append(run.Argv[1:], "-args", "-gate.results="+tmp, "-gate.evidence="+evidenceDir())...)
	cmd.Dir = g.dir
	//detvet:ignore the rerun go test inherits the user's environment by design, less the gate's own variables
	cmd.Env = childEnv(os.Environ())
	out := &tail{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	fmt.Fprintf(g.stderr, "ledger: rerunning %s (in %s)\n", run, g.dir)
	runErr := cmd.Run() // a failing gate exits 1 and still writes its result
	results, err := gate.ReadResults(tmp)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %v; %v; its output ends:\n%s", run, runErr, err, out.String())
	}
	return results, nil
}

// evidenceDir is where a gate keeps the evidence of its failures when
// neither -gate.results nor -gate.evidence says: codegenie/evidence in the
// user's cache directory, else in the temporary directory.
func evidenceDir() string {
	//detvet:ignore the evidence of a rerun goes to the user's cache directory, as a gate's does by default
	base, err := os.UserCacheDir()
	if err != nil {
		//detvet:ignore the fallback when there is no cache directory, as for a gate
		base = os.TempDir()
	}
	return filepath.Join(base, "codegenie", "evidence")
}

// childEnv drops the gate settings that would make the re-run skip the
// scenario as another shard's or write elsewhere, and the ledger's DSN,
// which a test process does not read.
func childEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "CODEGENIE_LEDGER" || strings.HasPrefix(k, "CODEGENIE_GATE_")
	})
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	b   []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b, t.cut = t.b[len(t.b)-t.max:], true
	}
	return len(p), nil
}

// goTestTime is the duration go test prints after a test or a package
// ("--- FAIL: TestX (0.01s)", "FAIL\tpkg\t0.123s").
var goTestTime = regexp.MustCompile(`(?m)(^\s*--- [A-Z]+: .* \(|^(?:ok|FAIL)\s+\S+\s+)\d+(?:\.\d+)?s`)

// String returns the output kept, from its first whole line, with go
// test's durations replaced by "Ns", so that a message quoting it is the
// same bytes on every run.
func (t *tail) String() string {
	b := t.b
	if t.cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return goTestTime.ReplaceAllString(string(b), "${1}Ns")
}
