package properties

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codegenie/codegenie/harness"
)

var summaryPath = flag.String("gate.summary", "", "also write the gate summary to this file")

// gateSummary collects every contract report of the process for the
// one-screen summary TestMain prints.
var gateSummary struct {
	mu      sync.Mutex
	source  string
	reports []*harness.Report
}

func recordReport(rep *harness.Report) {
	if rep == nil {
		return
	}
	gateSummary.mu.Lock()
	defer gateSummary.mu.Unlock()
	gateSummary.reports = append(gateSummary.reports, rep)
}

// raceEnabled is set under -race (race_test.go).
var raceEnabled bool

// raceRapidChecks is the rapid case count under -race, unless -rapid.checks
// is given: the pipeline properties run the whole tier several times per
// case, ten times slower under the race detector.
const raceRapidChecks = "20"

func TestMain(m *testing.M) {
	flag.Parse()
	if raceEnabled {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
		if f := flag.Lookup("rapid.checks"); f != nil && !set {
			_ = f.Value.Set(raceRapidChecks)
		}
	}
	start := time.Now()
	code := m.Run()
	var sb strings.Builder
	writeSummary(&sb, time.Since(start), code)
	fmt.Print(sb.String())
	if *summaryPath != "" {
		if err := os.WriteFile(*summaryPath, []byte(sb.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "properties: write -gate.summary %s: %v\n", *summaryPath, err)
		}
	}
	os.Exit(code)
}

// writeSummary prints the one-screen gate summary: per contract test the
// runs, distinct outputs and tapes, digests and wall time.
func writeSummary(w io.Writer, wall time.Duration, code int) {
	gateSummary.mu.Lock()
	defer gateSummary.mu.Unlock()
	reps := slices.Clone(gateSummary.reports)
	slices.SortFunc(reps, func(a, b *harness.Report) int { return strings.Compare(a.Scenario, b.Scenario) })
	verdict := "PASS"
	if code != 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "\n== determinism gate: %s ==\n", verdict)
	if gateSummary.source != "" {
		fmt.Fprintf(w, "LLM source: %s\n", gateSummary.source)
	}
	fmt.Fprintf(w, "%-28s %9s %8s %6s %-16s %-16s %10s\n", "scenario", "runs", "outputs", "tapes", "output digest", "chain digest", "wall")
	scenarios := map[string]bool{}
	totalRuns := 0
	for _, r := range reps {
		name, _, _ := strings.Cut(r.Scenario, "/")
		scenarios[name] = true
		totalRuns += r.Runs
		mark := ""
		if !r.OK() {
			mark = "  FAIL"
		}
		if r.BudgetExceeded {
			mark += "  BUDGET EXCEEDED"
		}
		fmt.Fprintf(w, "%-28s %4d/%-4d %8d %6d %-16s %-16s %10v%s\n", r.Scenario, r.Runs, r.Iterations,
			r.DistinctOutputs, r.DistinctTapes, r.OutputDigest.String()[:16], r.ChainDigest.String()[:16],
			r.Wall.Round(time.Millisecond), mark)
	}
	iters := "-"
	if len(reps) > 0 {
		iters = fmt.Sprint(reps[0].Iterations)
	}
	fmt.Fprintf(w, "scenarios: %d, contract tests: %d, iterations per test: %s, runs: %d, wall time: %v\n",
		len(scenarios), len(reps), iters, totalRuns, wall.Round(time.Millisecond))
}
