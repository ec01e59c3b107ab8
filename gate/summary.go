package gate

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/excerpt"
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
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Test, b.Test), strings.Compare(a.ImportPath, b.ImportPath))
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
			strings.Join(r.ClassSizes(), "+"), excerpt.Digest(r.OutputDigest), excerpt.Digest(r.ChainDigest), cmp.Or(key, "-"))
	}
	var vs []string
	known := 0
	for _, v := range []Verdict{Pass, "FAIL", Nondeterministic, Broken, Crashed} {
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
