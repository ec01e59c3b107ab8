package harness

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codegenie/codegenie/internal/childproc"
)

// WriteSummary writes the one-screen gate summary of rs to w: the gate's
// verdict, then one line per scenario (verdict, runs, class sizes,
// digests and key) in scenario order, then totals by the verdicts the
// lines show. Skipped results are left out; names are quoted when they
// hold anything but printable characters; a result passes as Result.Err
// says, and one of verdict PASS that does not is shown as FAIL, in its
// line and in the totals. It depends only on what the results say about
// the runs (no wall times, no process ids), so a merge of shards prints
// exactly what the unsharded gate prints.
func WriteSummary(w io.Writer, rs []Result) error {
	rs = slices.DeleteFunc(slices.Clone(rs), func(r Result) bool { return r.Verdict == Skipped })
	slices.SortFunc(rs, func(a, b Result) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Test, b.Test), strings.Compare(a.Package, b.Package))
	})
	gate := "PASS"
	counts := map[string]int{}
	runs, procs := 0, 0
	for _, r := range rs {
		if !r.OK() {
			gate = "FAIL"
		}
		counts[shownVerdict(r)]++
		runs += r.Runs
		procs += r.ProcessRuns
	}
	if len(rs) == 0 {
		gate = "NO SCENARIOS"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "== determinism gate: %s ==\n", gate)
	fmt.Fprintf(&sb, "%-32s %-16s %-9s %-12s %-16s %-16s %s\n", "scenario", "verdict", "runs", "class sizes", "output digest", "chain digest", "key")
	for _, r := range rs {
		v := shownVerdict(r)
		key := r.Key
		if len(key) > 16 {
			key = quoteName(key[:16])
		}
		fmt.Fprintf(&sb, "%-32s %-16s %-9s %-12s %-16s %-16s %s\n", quoteName(r.Scenario), v, fmt.Sprintf("%d/%d", r.Runs, r.Iterations),
			classSizes(r.Classes), short(r.OutputDigest), short(r.ChainDigest), cmp.Or(key, "-"))
	}
	var vs []string
	known := 0
	for _, v := range []Verdict{Pass, "FAIL", Nondeterministic, Broken, crashed} {
		if n := counts[string(v)]; n > 0 {
			vs = append(vs, fmt.Sprintf("%d %s", n, v))
			known += n
		}
	}
	if n := len(rs) - known; n > 0 {
		vs = append(vs, fmt.Sprintf("%d of another verdict", n))
	}
	fmt.Fprintf(&sb, "scenarios: %d (%s), runs: %d, of them in child processes: %d\n", len(rs), strings.Join(vs, ", "), runs, procs)
	_, err := io.WriteString(w, sb.String())
	return err
}

// results holds the result of every Check this process ran, for Main.
var results struct {
	sync.Mutex
	list []Result
}

// processResults returns the results of every Check this process has run so far,
// in the order they finished.
func processResults() []Result {
	results.Lock()
	defer results.Unlock()
	return slices.Clone(results.list)
}

// Main runs m's tests, shuffled as by go test -shuffle unless the command
// line sets -shuffle (the seed is printed and named in every report), and
// then, unless this process is a child of a gate, prints the gate summary
// of every Check it ran (WriteSummary) to stdout and, under
// -gate.summary, to that file. It returns m.Run's exit code.
// Call it from TestMain: os.Exit(harness.Main(m)).
func Main(m *testing.M) int {
	shuffleTests()
	code := m.Run()
	if spec, _ := childproc.Self(); spec != nil {
		return code
	}
	rs := processResults()
	if len(rs) == 0 {
		return code
	}
	var sb strings.Builder
	_ = WriteSummary(&sb, rs)
	fmt.Print("\n" + sb.String())
	gf, err := gateFlags()
	if err == nil && gf.summary != "" {
		if err := os.WriteFile(gf.summary, []byte(sb.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "harness: write -gate.summary %s: %v\n", gf.summary, err)
			return max(code, 1)
		}
	}
	return code
}

// finishCheck records a report's result: in this process (Results), in the
// results directory and in the ledger when the gate flags ask for them.
// A failure to write fails t.
func finishCheck(t testing.TB, gf gateConfig, rep *Report) {
	t.Helper()
	res := rep.Result()
	results.Lock()
	results.list = append(results.list, res)
	results.Unlock()
	if gf.results != "" {
		if _, err := WriteResult(gf.results, res); err != nil {
			t.Errorf("harness: -gate.results: %v", err)
		}
	}
	if gf.ledger != "" {
		if err := appendToLedger(t.Context(), gf.ledger, rep); err != nil {
			t.Errorf("%v", err)
		}
	}
}
