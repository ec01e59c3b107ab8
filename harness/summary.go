package harness

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/childproc"
	"github.com/codegenie/codegenie/internal/gateflags"
)

// results holds the result of every Check this process ran, for Main.
var results struct {
	sync.Mutex
	list []gate.Result
}

// processResults returns the results of every Check this process has run so far,
// in the order they finished.
func processResults() []gate.Result {
	results.Lock()
	defer results.Unlock()
	return slices.Clone(results.list)
}

// Main runs m's tests, shuffled as by go test -shuffle unless the command
// line sets -shuffle (the seed is printed and named in every report), and
// then, unless this process is a child of a gate, prints the gate summary
// of every Check it ran (gate.WriteSummary) to stdout and, under
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
	_ = gate.WriteSummary(&sb, rs)
	fmt.Print("\n" + sb.String())
	gf, err := gateflags.Get()
	if err == nil && gf.Summary != "" {
		if err := os.WriteFile(gf.Summary, []byte(sb.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "harness: write -gate.summary %s: %v\n", gf.Summary, err)
			return max(code, 1)
		}
	}
	return code
}

// finishCheck records a report's result: in this process (for Main) and
// in the results directory when the gate flags ask for it. A failure to
// write fails t.
func finishCheck(t testing.TB, gf gateflags.Settings, rep *Report) {
	t.Helper()
	res := rep.Result()
	results.Lock()
	results.list = append(results.list, res)
	results.Unlock()
	if gf.Results != "" {
		if _, err := res.Save(gf.Results); err != nil {
			t.Errorf("harness: -gate.results: %v", err)
		}
	}
}
