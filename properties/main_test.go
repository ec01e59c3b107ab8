package properties

import (
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/codegenie/codegenie/harness"
)

// llmSourceLine says where the gate's LLM answers came from, for the line
// TestMain prints before the summary.
var llmSourceLine atomic.Value

// raceEnabled is set under -race (race_test.go).
var raceEnabled bool

// raceRapidChecks is the rapid case count under -race, unless -rapid.checks
// is given: the pipeline properties run the whole tier several times per
// case, ten times slower under the race detector.
const raceRapidChecks = "20"

// TestMain runs the gate through harness.Main, which prints the one-screen
// summary of every contract test (and writes it to -gate.summary), and
// fails it if any goroutine outlived the tests.
func TestMain(m *testing.M) {
	flag.Parse()
	if raceEnabled {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
		if f := flag.Lookup("rapid.checks"); f != nil && !set {
			_ = f.Value.Set(raceRapidChecks)
		}
	}
	code := harness.Main(m)
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintf(os.Stderr, "properties: goroutines outlived the tests: %v\n", err)
		code = 1
	}
	if src, ok := llmSourceLine.Load().(string); ok && os.Getenv("CODEGENIE_HARNESS_CHILD") == "" {
		fmt.Printf("LLM source: %s\n", src)
	}
	if w, ok := freshnessWarnings.Load().(string); ok && os.Getenv("CODEGENIE_HARNESS_CHILD") == "" {
		fmt.Print(w)
	}
	os.Exit(code)
}
