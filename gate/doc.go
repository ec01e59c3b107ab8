// Package gate is the determinism gate's CI plumbing and the one
// definition of its outcome: the [Outcome] of a gate for one scenario
// (its [Verdict], classes ([Class]), run key, digests, [Causes], evidence
// and commands ([Command])), which harness.Report, a result file ([Result]) and a
// ledger entry (ledger.Entry) each embed; the result files a gate writes
// under -gate.results; the merge of the shards of a CI matrix
// ([MergeResults]), its summary ([WriteSummary]) and its explanation of
// each scenario that did not pass ([Result.Explain]).
//
// It does not run anything (package harness runs the gate and writes the
// results through this package), and it does not keep history (package
// ledger does; cmd/gate-merge -ledger appends merged verdicts to it). It
// imports neither.
//
// # Gate flags
//
// In test binaries that import harness, each flag has an environment
// variable used when the flag is absent (so `go test ./...` can pass it to
// every package):
//
//	-gate.shard=i/n      CODEGENIE_GATE_SHARD: run only the scenarios whose
//	                     name's FNV-1a hash (32 bits) modulo n is i, the
//	                     same on every machine; the others get a Skipped
//	                     result, and a test whose every Check is another
//	                     shard's ends as skipped (t.Skip)
//	-gate.results=DIR    CODEGENIE_GATE_RESULTS: write one result file per
//	                     Check into DIR, and the evidence into DIR/evidence
//	-gate.summary=FILE   CODEGENIE_GATE_SUMMARY: harness.Main writes the
//	                     summary there too
//	-gate.evidence=DIR   CODEGENIE_GATE_EVIDENCE: keep the evidence of
//	                     failing gates under DIR
//
// A test process appends nothing to a ledger: verdicts reach a ledger
// from result files, with
//
//	go run github.com/codegenie/codegenie/cmd/gate-merge -ledger DSN RESULTS_DIR...
//
// (one folder for an unsharded gate, one per shard otherwise), which
// bounds each append and names the holder of a lock it waited for.
// -gate.ledger fails every Check, saying so; CODEGENIE_LEDGER, the DSN of
// the ledger command and of the CI recipes' merge jobs, is not read by a
// test process.
//
// # Result files
//
// A result file is DIR/<scenario>-<16 hex digits>.json (the digits name
// the import path, test and scenario), one JSON object of format
// "codegenie-gate-result/3": the Outcome's members, with the names a
// ledger entry gives them, and the result's own:
//
//	format            "codegenie-gate-result/3"
//	scenario, test    the scenario and the Go test (t.Name()) that ran it
//	package           the test's package directory relative to the module
//	                  root, with slashes ("." for the root)
//	import_path       the package's import path
//	verdict           PASS | NONDETERMINISTIC | BROKEN | SKIPPED | CRASHED
//	skipped           why a SKIPPED scenario was not run
//	failure           why the gate did not pass (one line per reason)
//	explanation       the first screen of the report of a gate that did not
//	                  pass: headline, what differs, cause (at most 40
//	                  lines of 200 bytes)
//	iterations, runs, process_runs, floor
//	                  runs asked for, made, made in child processes, and
//	                  the fewest a pass needs
//	classes           [{runs, first_run, in_process, key, output_digest,
//	                  chain_digest, events, error, message}], largest
//	                  first: error is the error kind, message the first
//	                  line of the first run's error
//	key, components   the run key and the pins it is the digest of
//	output_digest, chain_digest, events
//	                  the largest class's digests (hex blake3) and tape length
//	causes            what a perturbation alone changed ([Causes])
//	evidence          the evidence bundle; report.txt and report.json are
//	                  beside it
//	commands          [{purpose, argv}]: compare (bundle diff on the
//	                  bundle, run from the folder the evidence is relative
//	                  to), reproduce and re-record (go test of the package
//	                  and test, run from the module root)
//	shard             "i/n" of the CI run that wrote it
//	in_progress, crash_output
//	                  of a CRASHED result: the run in progress and the
//	                  file the process's fatal error report went to
//	wall_ns           the wall time of the runs
//
// Empty members are omitted. Paths inside DIR are relative to it, with
// slashes, so one folder holds everything a merge job or another machine
// needs (docs/ci in the repository has CI recipes). A result file is
// input from another machine: [ReadResults] reads only regular files of
// at most 8 MiB and 65,536 JSON objects, strictly, and checks the shard,
// counts, names and paths ([Result.Validate]) and accepts only the
// commands the harness writes ([Outcome.CheckCommand]).
//
// While a gate under -gate.results makes its runs, its result file has
// verdict CRASHED and names the run in progress (rewritten before each
// run in the test process) and the file the process's fatal error report
// goes to (runtime/debug.SetCrashOutput, DIR/<scenario>-<16 hex
// digits>.crash.txt); when the gate ends, its result replaces that and
// the crash output file is removed. One left behind says the test
// process died during that run: a panic in a goroutine the scenario
// started, os.Exit, running out of memory or a signal.
//
// # Merging shards
//
// [ReadResults] reads a directory of result files (Result.Folder is that
// directory, which relative paths resolve against); [MergeResults] merges
// shards by the rules for combining records from several sources (ordered by
// scenario, then identity; identical results once; a different result for
// the same scenario a conflict; a scenario without a result, because its
// shard is missing or crashed first, an error); [WriteSummary] prints the
// one-screen summary from results alone, so a merge prints what the
// unsharded gate prints; [Result.Explain] says what a merge says of a
// result that did not pass, with its paths and commands runnable from
// where the folders were read, and [Result.Resolved] is the outcome a
// ledger records of it.
package gate
