package gate

// Verdict is a gate's judgement over every run of a scenario.
type Verdict string

// The verdicts. A ledger records the first three (the gate's verdicts of
// a scenario it ran); a result file holds any of them.
const (
	// Pass: one class, no error: every run gave the same outcome.
	Pass Verdict = "PASS"
	// Nondeterministic: more than one class, whatever mix of successes
	// and failures.
	Nondeterministic Verdict = "NONDETERMINISTIC"
	// Broken: one class whose runs all failed the same way: a
	// reproducible failure, not a flaky one.
	Broken Verdict = "BROKEN"
	// Skipped: the scenario was not run by this process (another shard's,
	// or not the one a child process was started for). A skipped result
	// only says the scenario exists.
	Skipped Verdict = "SKIPPED"
	// Crashed: the result a gate keeps in its results folder while it
	// runs, replaced by its own when it ends: one left behind says the
	// test process died during the gate (Result.InProgress).
	Crashed Verdict = "CRASHED"
)
