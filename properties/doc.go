// Package properties is the determinism gate: the merge-blocking suites CI
// runs as `go test ./properties/...` (`make gate`). It has no library code;
// nothing imports it. Its tests are the determinism contract for every
// fixture scenario, plus property tests of the pieces determinism rests on.
//
// # Suites
//
//   - TestContract/<scenario>/<path>: the 50-iteration replay-only contract
//     test (harness.Config.Check) on the happy path and on the retry-bypass
//     path (prior attempts), each run in its own synctest bubble, four of
//     them in child processes of the test binary with a perturbed
//     environment (working directory, TMPDIR, time zone, locale, CPU
//     affinity, hostname, the environment variables the pipeline reads),
//     each with a fresh tier and a cassette the harness opened for that run
//     alone (harness.Run.Client). Every run must produce the same
//     Transform.DiffBytes and the same event tape modulo the allowlist
//     declared once in contract_test.go: one class, verdict PASS. Each run
//     pins the five components of its RunKey (harness.Run.Pin), so the
//     report's key is the RunKey.
//   - TestReplayMakesNoNetworkConnection: the proof that the gate
//     makes no network connection in replay mode. Every scenario and path
//     runs through the same cassette source with a replay-mode context
//     (guard.WithReplay) carrying a dial counter, once with the contract
//     test's live clock and IDs and once as a replayed run
//     (fixtures.ReplaySetup: recorded clock, guard.IDSource IDs, tape equal
//     to the recording but for the allowlisted fields), while
//     guardtest.CountDials counts and refuses every dial through
//     http.DefaultTransport and net.DefaultResolver; no dial may occur. A
//     deliberate dial at the end proves the counter live. TestContract
//     counts its dials the same way.
//   - TestGolden: each scenario's output digest and chain digest, keyed by
//     its RunKey, must equal the committed golden in testdata/golden. This
//     catches drift across processes, machines and Go versions, which one
//     process cannot see.
//   - rapid properties (TestProp...): band classifier purity and
//     monotonicity, retrieval ranking invariant under store insertion
//     order, prompt bytes invariant under the order of unordered inputs,
//     tape merge invariant under lane interleavings, and pipeline
//     determinism for generated advisories and repos against
//     internal/fakellm. A failing property's rapid failfile goes to the
//     test's artifact directory (go test -artifacts keeps it), never into
//     the source tree; only -update lets rapid write into testdata/rapid/.
//     Commit failfiles there as regression seeds: TestRapidFailfiles
//     replays each.
//
// # Golden file format
//
// testdata/golden/<run key>.<path>.json, one per scenario and path, where
// <run key> is fallback.RunKey.String() (64 hex digits) and <path> is
// "happy" or "retry" (the RunKey pins the configuration, not the prior
// attempts, so the path is part of the name):
//
//	{
//	  "scenario": "npm-lodash",
//	  "path": "happy",
//	  "run_key": { ...the fallback.RunKey fields... },
//	  "output_digest": "<blake3 of Transform.DiffBytes>",
//	  "chain_digest": "<events.Chain of the tape, allowlist stripped>",
//	  "events": 8
//	}
//
// Run `go test ./properties -run TestGolden -update` to rewrite them
// (atomically; stale files are removed) after a deliberate change, and
// commit them with the cassettes they depend on. An empty golden directory
// fails the gate. A missing golden names each RunKey component that moved;
// a golden that differs under the same key says the outcome moved for the
// same key.
//
// # Flags
//
//	-update               rewrite testdata/golden (see above), and let rapid
//	                      write failfiles into testdata/rapid
//
// and the harness's gate flags (see package harness): -gate.shard=i/n,
// -gate.results=DIR, -gate.summary=FILE, each also read from its
// environment variable (CODEGENIE_GATE_SHARD, ...). TestMain runs the
// tests through harness.Main, which prints the one-screen summary.
//
// # LLM source
//
// The suites replay the committed cassettes
// (cassettes/testdata/<scenario>.<path>.yaml, verified against their
// manifest) in replay-only mode, one freshly opened cassette per run; a
// missing cassette or an empty directory fails. Every such run's context
// is in replay mode (guard.WithReplay), so pipeline code that guards an
// operation with guard.AssertReplaySafe is refused here. The contract
// test still injects a live clock and ID source on purpose: the allowlist
// must be exercised by fields that really differ between runs. Only the generated-input
// property (TestPropPipelineDeterminism), whose inputs no cassette can
// hold, runs against the in-process fake LLM (internal/fakellm).
package properties
