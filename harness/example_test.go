package harness_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/harness"
)

// pipeline is a tiny deterministic scenario: two events and an output.
func pipeline(band string) harness.Scenario {
	return func(ctx context.Context, iter int) (harness.Outcome, error) {
		r := events.NewRecorder(events.Options{})
		root, _ := r.EmitAfter(0, kindStarted, map[string]string{"scenario": "npm"})
		_, _ = r.EmitAfter(root, kindClassified, map[string]any{"band": band})
		return harness.Outcome{DiffBytes: []byte("--- a/package.json\n"), Events: r.Events()}, nil
	}
}

func ExampleIterate() {
	rep, err := harness.Iterate(context.Background(), harness.Config{}, "npm", pipeline("accept"))
	fmt.Println(err)
	fmt.Println(rep.Runs, rep.DistinctOutputs, rep.DistinctTapes, rep.Events)
	// Output:
	// <nil>
	// 50 1 1 2
}

func ExampleIterate_divergence() {
	flaky := func(ctx context.Context, iter int) (harness.Outcome, error) {
		band := "accept"
		if iter == 7 {
			band = "borderline"
		}
		return pipeline(band)(ctx, iter)
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	rep, err := harness.Iterate(context.Background(), harness.Config{ArtifactDir: dir}, "npm", flaky)
	fmt.Println(errors.Is(err, harness.ErrNondeterministic))
	d := rep.Divergence
	fmt.Println("run", d.Run, "of", rep.Runs, "-", d.DistinctTapes, "distinct tapes")
	fmt.Println("event", d.Event.Index, d.Event.Kind, d.Event.Field, "at byte", d.Event.Offset)
	fmt.Println(d.Event.PayloadDiff[0])
	// Output:
	// true
	// run 7 of 50 - 2 distinct tapes
	// event 1 score.classified Payload at byte 9
	// ["band"]: "accept" != "borderline"
}

func ExampleCheck() {
	// In a _test.go file:
	_ = func(t *testing.T) {
		harness.Check(t, harness.Config{Iterations: 50}, "npm", pipeline("accept"))
	}
}

func ExampleDefaultAllowlist() {
	for _, a := range harness.DefaultAllowlist() {
		fmt.Println(a.Field)
	}
	// Output:
	// EmittedAt
	// AuditEventID
	// BudgetTokenID
}

func ExampleReadTape() {
	out, _ := pipeline("accept")(context.Background(), 0)
	file := harness.AppendTape(nil, out.Events)
	evs, err := harness.ReadTape(file)
	fmt.Println(err, len(evs), evs[1].Kind, string(evs[1].Payload))
	// Output: <nil> 2 score.classified {"band":"accept"}
}

func ExampleReport_Summary() {
	rep, _ := harness.Iterate(context.Background(), harness.Config{Iterations: 20, Procs: []int{1}}, "npm", pipeline("accept"))
	fmt.Println(rep.OK(), rep.GOMAXPROCS, rep.OutputDigest == events.Sum([]byte("--- a/package.json\n")))
	// Output: true [1] true
}

func ExampleReproCommand() {
	// In a test: the command a failure report ends with.
	_ = func(t *testing.T) {
		t.Log(harness.ReproCommand(t)) // cd /repo && go test -run '^TestX$' -count=1 -artifacts ./pkg
	}
}
