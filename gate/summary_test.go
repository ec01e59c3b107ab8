package gate_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// TestSummaryAgrees: the count line of a summary tallies the verdicts its
// table shows, and its first line says FAIL exactly when a row is not a
// pass: a result of verdict PASS with too few runs is a FAIL row and
// counted as FAIL, never as PASS.
func TestSummaryAgrees(t *testing.T) {
	t.Parallel()
	belowFloor := func(s string) gate.Result {
		r := passResult(s)
		r.Runs, r.Classes[0].Runs = 3, 3
		return r
	}
	nondet := func(s string) gate.Result {
		r := passResult(s)
		r.Verdict, r.Classes = gate.Nondeterministic, []gate.Class{{Runs: 30}, {Runs: 20}}
		return r
	}
	crashed := func(s string) gate.Result {
		r := passResult(s)
		r.Verdict, r.Runs, r.Classes = "CRASHED", 3, nil
		return r
	}
	other := func(s string) gate.Result {
		r := passResult(s)
		r.Verdict = "GREEN"
		return r
	}
	tests := []struct {
		name   string
		rs     []gate.Result
		counts string
	}{
		{"all-pass", []gate.Result{passResult("a"), passResult("b")}, "2 PASS"},
		{"pass-below-floor", []gate.Result{belowFloor("a"), belowFloor("b")}, "2 FAIL"},
		{"mixed", []gate.Result{passResult("a"), belowFloor("b"), nondet("c"), crashed("d"), other("e")},
			"1 PASS, 1 FAIL, 1 NONDETERMINISTIC, 1 CRASHED, 1 of another verdict"},
	}
	row := regexp.MustCompile(`^(\S+)\s+(\S+)\s+\d+/\d+\s`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sb strings.Builder
			require.NoError(t, gate.WriteSummary(&sb, tt.rs))
			lines := strings.Split(strings.TrimSuffix(sb.String(), "\n"), "\n")
			tally := map[string]int{}
			failed := false
			for _, l := range lines[2 : len(lines)-1] {
				m := row.FindStringSubmatch(l)
				require.NotNil(t, m, "a table row: %q", l)
				tally[m[2]]++
				failed = failed || m[2] != "PASS"
			}
			var want []string
			for _, v := range []string{"PASS", "FAIL", "NONDETERMINISTIC", "CRASHED"} {
				if tally[v] > 0 {
					want = append(want, fmt.Sprintf("%d %s", tally[v], v))
				}
			}
			if n := tally["GREEN"]; n > 0 {
				want = append(want, fmt.Sprintf("%d of another verdict", n))
			}
			require.Equal(t, tt.counts, strings.Join(want, ", "), "the table:\n%s", sb.String())
			require.Contains(t, lines[len(lines)-1], fmt.Sprintf("scenarios: %d (%s)", len(tt.rs), tt.counts), sb.String())
			require.Equal(t, failed, lines[0] == "== determinism gate: FAIL ==", sb.String())
			require.Equal(t, !failed, slices.Contains(lines, "== determinism gate: PASS =="), sb.String())
		})
	}
}
