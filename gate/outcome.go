package gate

// Outcome is what a gate found for one scenario: the one definition that
// harness.Report, a result file (Result) and a ledger entry
// (ledger.Entry) each embed, so that a field added here reaches all
// three. Its JSON names are those a ledger entry has always used, and
// every member is omitted when empty.
type Outcome struct {
	// Scenario is the scenario's name; Test the Go test that ran the gate
	// (t.Name(), subtests with /); Package the test's package directory
	// relative to the module root, with slashes ("." for the root), and
	// ImportPath its import path. A command re-runs the gate with go test
	// Package -run Test.
	Scenario   string `json:"scenario,omitempty"`
	Test       string `json:"test,omitempty"`
	Package    string `json:"package,omitempty"`
	ImportPath string `json:"import_path,omitempty"`
	// Verdict is the judgement over every run made ("" when none was);
	// Skipped says why the scenario was not run (Verdict Skipped).
	Verdict Verdict `json:"verdict,omitempty"`
	Skipped string  `json:"skipped,omitempty"`
	// Failure says why the gate did not pass (harness.Report.Err) and
	// Explanation is the first screen of its report (the headline, what
	// differs and the cause, at most 40 lines), in a result file and a
	// ledger entry of a gate that did not pass; a report leaves both
	// empty, its Err and Text say them in full.
	Failure     string `json:"failure,omitempty"`
	Explanation string `json:"explanation,omitempty"`
	// Iterations is the number of runs asked for; Runs the number made,
	// ProcessRuns of them in child processes; Floor the fewest runs a
	// pass needs.
	Iterations  int `json:"iterations,omitempty"`
	Runs        int `json:"runs,omitempty"`
	ProcessRuns int `json:"process_runs,omitempty"`
	Floor       int `json:"floor,omitempty"`
	// Classes groups the runs by outcome, largest first.
	Classes []Class `json:"classes,omitempty"`
	// Key and Components are the pins of the first run of the largest
	// class and their digest (harness.Key): the run key.
	Key        string            `json:"key,omitempty"`
	Components map[string]string `json:"components,omitempty"`
	// OutputDigest, ChainDigest and Events describe the largest class:
	// its digests in hex (64 digits; "" when no run was made) and the
	// tape length of its first run.
	OutputDigest string `json:"output_digest,omitempty"`
	ChainDigest  string `json:"chain_digest,omitempty"`
	Events       int    `json:"events,omitempty"`
	// Causes says what a perturbation alone changed, when the gate traced
	// a difference to one.
	Causes *Causes `json:"causes,omitempty"`
	// Evidence is the main evidence file, the bundle of the kept runs
	// ("" when none was written); report.txt and report.json are beside
	// it. A report names it by its absolute path, a result file relative
	// to its folder when inside it.
	Evidence string `json:"evidence,omitempty"`
	// Commands are the commands to run next, as data. A report lists
	// every command it prints, each with the directory to run it in; a
	// result file and a ledger entry only those CheckCommand accepts.
	Commands []Command `json:"commands,omitempty"`
}
