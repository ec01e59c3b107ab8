// Package harness is the determinism runner: it runs a scenario many
// times, each run in a fresh goroutine tree, and proves that every run
// produced the same output bytes and the same event tape, modulo a small
// allowlist of fields that differ by design. When runs differ it says, as
// data, which run, which event, which field and byte, why (the causal
// chain), where the evidence is and how to reproduce it.
//
// It is not a test framework, a benchmark tool or a scheduler, and it knows
// nothing about the fallback pipeline: a Scenario is any function that
// returns an Outcome (output bytes plus tape). The gate suites in package
// properties and any team's own pipeline use it the same way.
//
// # Entry points
//
// Iterate is the core: it returns a *Report and an error (nil when the
// gate passed). Check wraps it for tests: it fails the test with the full
// report, and runs every iteration inside a testing/synctest bubble.
//
// # One run
//
// Run i sets GOMAXPROCS to Config.Procs[i%len] (default 1..max(NumCPU,2),
// restored afterwards), starts a new goroutine with a new context derived
// from the caller's, perturbs the schedule (a run-dependent number of
// yielding goroutines and yields), calls the scenario, and cancels the
// context. Under Check the goroutine is the root of a synctest bubble
// whose fake clock is first moved to a run-dependent instant, so a clock
// reading that reaches the output differs between runs and is caught; a
// goroutine left durably blocked when the run returns fails that run with
// its stack, and a run whose goroutines all block fails as deadlocked
// rather than hanging. (A goroutine blocked on I/O, a system call or a
// mutex is not durably blocked: the bubble waits for it instead.) On
// GOMAXPROCS 1 the Go scheduler runs goroutines in a fixed order, so most
// goroutine-order bugs only show on the runs with more Ps: the harness's
// own tests measured a completion-order fan-out bug caught by 1 gate run in
// 100 at GOMAXPROCS 1 alone, 96 at 2 alone, and 100 with the default
// schedule and perturbation. Under Iterate, goroutines that are still alive
// Config.LeakGrace after the run and that do not descend from a goroutine
// alive before it are reported with their stacks. Gate runs in one process
// are serialised, because GOMAXPROCS is process-wide.
//
// # Comparison
//
// For each run the harness keeps the blake3 digest of the output bytes and
// the chain digest (events.ChainStripped) of the tape with the allowlisted
// fields zeroed, so an equal run costs two digest comparisons. The
// allowlist names Event struct fields (events.FieldByName) and every entry
// carries a reason; there is no pattern matching over text, and every
// field not on the list — Seq, Parent, Kind, Lane, Payload,
// PayloadDigest — is compared. The first run whose digests differ from
// run 0's is compared with it in full: the first differing output byte
// with an excerpt of each side, and the first divergent event found by
// events.Scan (index, kind, seq, parent, field, payload offset, excerpts,
// field-level payload diff, causal chain). DistinctOutputs and
// DistinctTapes count distinct values over all runs; a passing gate has one
// of each, no run error, no leak and at least Config.Floor runs.
//
// # Evidence
//
// On a divergence the harness writes, under ArtifactDir/<scenario>/:
//
//	run-NNN.tape          run NNN's events as canonical binary records
//	                      (events.AppendRecord) back to back, nothing
//	                      stripped; read with ReadTape
//	run-NNN.events.jsonl  the same events, one JSON object per line, the
//	                      payload inline when it is JSON
//	run-NNN.out           run NNN's output bytes
//	<scenario>-run-NNN-<chain>.bundle.zst
//	                      run NNN as a replay bundle (replay.WriteRun),
//	                      with Outcome.Pin in its metadata
//	divergence.json       the Divergence as JSON
//	report.txt            the Report as text
//
// for run 0 and the first divergent run, each file written atomically, and
// the report gives the `go run ./cmd/replay diff` command that compares the
// two bundles (replay's diff engine is events.Compare too, so it agrees).
// A run that fails still has its partial tape compared with run 0, so an
// upstream nondeterminism that surfaces as a downstream error (a cassette
// miss) is located.
package harness
