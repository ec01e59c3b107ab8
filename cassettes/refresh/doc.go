// Package refresh re-records a module's cassettes through the tests that
// own them, reviews what changed, proves the new cassettes replay, and
// applies them: the cassette steward's workflow, for any module, as a few
// steps a team can script. cmd/refresh-cassettes is a thin command over
// it.
//
// It is not a recorder (package cassettes records, in the team's own test
// binaries) and it links no LLM SDK and no pipeline: it runs the go
// command and the module's test binaries.
//
// # Steps
//
//	cfg := refresh.Config{Log: os.Stderr}
//	found, _ := cfg.Find(ctx)            // the cassettes the tests open
//	staged, _ := cfg.Record(ctx, found)  // re-recorded into a staging directory
//	defer staged.Close()
//	rev, _ := staged.Review(ctx)         // package cassettes/review
//	rev.Markdown(os.Stdout)
//	_ = staged.Parity(ctx)               // the tests pass on the staged copies
//	applied, _ := staged.Apply(ctx)      // atomically, per directory
//
// and [Config.Recover] finishes or discards what a killed refresh left.
//
// Find builds the test binary of each package whose tests link package
// cassettes and runs each top-level test alone with
// CODEGENIE_CASSETTES_LIST set: every cassettes.Open appends what it
// opened, and every miss in replay its cassette and, when the request
// differed only in the API version its SDK sends, the change (see A
// refresh's test runs in package cassettes). A cassette its tests
// missed is Missed, and stale for an SDK upgrade when it has
// VersionChanges. Running the
// tests, rather than reading a manifest, finds every cassette a test
// opens, with or without a manifest, and the test that owns it: the one
// the record switch must run to record it through the team's own code
// path. A cassette several tests open is recorded by the first (by
// package, then name) that sends requests to a local fake through
// cassettes.Redirect, else by the first: the others replay it.
//
// Record runs those tests with the record switch (-cassettes.record)
// selecting exactly the found cassettes and CODEGENIE_CASSETTES_STAGE
// naming a staging directory: recordings are saved there, and a later
// opening in the same run replays the staged copy, so the module's files
// do not change. Each cassette directory's refresh lock is held from
// Record to Close. A re-record keeps the recorded timing when the new
// measurement is only noise (see Re-recording and timing in package
// cassettes), so an unchanged pipeline re-records to the same bytes.
//
// Parity runs the recording tests again, replaying the staged copies:
// they must pass. A determinism gate in them (harness.Check) replays
// each staged cassette as often as it runs.
//
// Apply moves in only what changed (and what is past its maximum age),
// directory by directory with cassettes.Apply, so a refresh that changed
// nothing leaves every file byte for byte as it was.
package refresh
