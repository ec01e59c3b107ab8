// Package harness is the determinism runner: it runs a scenario many
// times, in isolation and in perturbed child processes, groups the runs
// into classes of equal outcome and gives one verdict. When runs differ it
// says, as data, how the outcomes are distributed, what differs between
// the two largest classes (output byte, event, field, causal chain, pins,
// requests), what a child process's perturbation alone changes, where the
// evidence is and how to reproduce it.
//
// It is not a test framework, a benchmark tool or a scheduler, and it
// knows nothing about any particular pipeline: a [Scenario] is any
// function of a [*Run] that returns output bytes.
//
// # The first test
//
//	func TestSummariseIsDeterministic(t *testing.T) {
//		harness.Check(t, "summarise", func(ctx context.Context, run *harness.Run) ([]byte, error) {
//			client, err := run.Client("testdata/summarise.yaml") // replays, opened for this run alone
//			if err != nil {
//				return nil, err
//			}
//			return summarise(ctx, client, run.Recorder()) // your pipeline: output bytes, one event per step
//		})
//	}
//
// [Check], the [Run] it hands the scenario (its [Run.Client] opens a
// cassette for that run alone, [Run.Recorder] gives the event recorder
// the pipeline writes one event per step to, [Run.Pin] names an input of
// the run key) and a recorded cassette are all it takes (package
// cassettes records one; ExampleCheck holds this code). [Config] holds
// the settings, [Config.Check] takes them; its zero value is the
// default, and [Config.Iterate] is the core for code outside tests. Both
// give a [Report] whose [gate.Verdict] is [gate.Pass],
// [gate.Nondeterministic] or [gate.Broken]; [Report.Err] wraps
// [ErrNondeterministic] or [ErrBroken] when the gate fails.
//
// # One run
//
// Run i sets GOMAXPROCS to [Config.Procs][i%len] (default 1..max(8, NumCPU):
// more Ps than cores still varies completion orders more than the cores
// alone), starts a new goroutine with a new context, perturbs the schedule
// (a run-dependent number of yielding goroutines and yields), calls the
// scenario, cancels the context and closes the run's cassettes. Under
// Check the goroutine is the root of a testing/synctest bubble whose fake
// clock is first moved to a run-dependent instant, and every response a
// [Run.Client] serves takes fake time drawn around the duration its
// recording measured, 0.5 to 2 times it, by run and call ([Config.Latency];
// a stream's frames keep their recorded cadence, scaled alike), so a clock
// reading or a measured latency that reaches the output differs between
// runs, and a timeout, deadline or elapsed-time cap that the recorded
// calls could hit in production is hit in some runs (a recording without
// durations, made before they were kept, gives 1 ms to 1 s). A goroutine
// left durably blocked fails the run with its stack, and a run whose
// goroutines all block fails as deadlocked. Under Iterate, goroutines left running are found with
// goleak.Find and attributed by ancestry. A run's cassette misses (or an
// exhausted cassette) fail the run even when the scenario swallowed them;
// so do unused interactions and a name pinned twice with two values.
//
// Each run of the test process also reads the bodies its Run.Client
// replays in Read boundaries of its own: run 0 as recorded (one frame of
// an event stream, or the whole body, per Read), the others by a plan
// drawn from the run number alone: split mid-frame, frames joined, single
// bytes, a mix, or as recorded ([Report.Chunking]). The bytes, their order
// and their recorded timing are the same under every plan, as a network
// may cut them anywhere, so a reader that honours the io.Reader contract
// (bufio, the SDKs' stream decoders: the official Anthropic and OpenAI
// SDKs pass under every plan) sees the same stream, and one that takes
// each Read as a whole frame does not. When runs of the test process
// differ, the first run of the differing class is made again with its
// plan and, twice, with its bodies as recorded; the causes
// ([gate.Causes]) name the stream chunking when only the plan makes it
// differ: fix the reader, never the cassette. Otherwise that run is made
// again with its own replayed latencies and, twice, with those of run 0,
// and the causes name the replayed latency when only its own make it
// differ ("the outcome depends on replayed latency"). Child processes
// read as recorded.
//
// A run blocked on I/O, a system call or a lock is not durably blocked,
// so its bubble never reports it: every run is watched in real time from
// outside, and one that outlives [Config.RunTimeout] (default
// 2 minutes, and always some time before go test's -timeout)
// fails as hung (error kind "hung") with its goroutines' stacks; no further
// run starts, and the report, evidence and result are still written. A
// panic in a goroutine the scenario started cannot be recovered by the
// harness and ends the process it happens in, the test binary included
// (under -gate.results the gate still leaves a result of verdict CRASHED:
// see below); [Config.ProcessPerRun] makes every run in a child process,
// where such a panic fails only that run.
//
// Under the cassettes record switch (go test -cassettes.record=REGEXP),
// run 0 records each cassette it opens that the switch selects, through
// [Config.Cassette]'s RealTransport (a [cassettes.Redirect] to a local fake, or
// the live API), each connection closed after its response so that
// nothing outlives the run; then run 0 is made again, and every other run
// and every child process replays what it recorded. The recording is kept
// only when the gate then passes; otherwise each cassette run 0 recorded
// is put back as it was before (or removed, if it was new), and
// [Report.RecordingDiscarded] says so. A recording that could not be saved
// (it met a transport error, captured nothing or held a secret) is not
// listed in [Report.Recorded]: every run replayed what was there before,
// and Report.RecordingDiscarded says why it was not saved; when run 0
// failed while recording, its own error is [Report.RecordingError], which
// the report leads with, and the next step is to fix it, never the
// record command just run.
//
// # Child processes
//
// Under Check, [Config.Processes] runs (default 4, spread evenly, never
// run 0) are made in child processes of the test binary, each running
// the current test again alone (a test that calls Check twice gives each
// call its own name). A child differs from the test process in what one
// process cannot vary for itself: the working directory (a symbolic link
// to the module root, so relative paths resolve as before), TMPDIR, TZ,
// LANG and LC_ALL, GOMAXPROCS, the CPU affinity mask (so runtime.NumCPU
// differs), the hostname and domain name, the umask, HOME and the XDG
// directories (fresh, with copies of the official SDKs' configuration
// entries, so a child's writes never reach the originals; Go's own
// directories unchanged), PATH, the executable's path, the process id,
// and each environment variable the scenario reads
// (found by the first child; later ones set it to another value), except
// those held as configuration ([Config.ConfigVars], by default the
// official SDKs' client configuration), which the report names once.
// The CPU mask, hostname, domain name and umask are varied on Linux
// only; the report lists what could not be varied on the machine, and
// why.
//
// A child that exits without a report, outlives [Config.ChildTimeout],
// writes anything but a well-formed report, or leaves a process it
// started running is a failed run with an error naming the child: it can
// never hang or pass the gate. A child's leftover processes are killed
// with its process group, and on Linux so is every process that keeps
// the child's mark in its environment, whatever session or group it
// moved to (setsid, a daemon's double fork); macOS finds only those of
// the group, Windows, which has no groups, none (the report says so).
//
// When every run in the test process agrees and only child runs differ,
// the first differing child run is made again in fresh processes: three
// times with nothing perturbed (if all three differ too, the outcome
// depends on the process itself: its pid, start time, addresses or state
// the test process carries; if some do, on state random per process, and
// nothing is blamed), then three times per perturbation alone; the report
// names each whose three tries all change the outcome, unless some
// perturbation's tries disagree ([gate.Causes]). When the first run of
// each process (run 0 and every child) differs from the later runs of the
// test process, the report says state is carried across runs and names
// the fresh-process class ([Report.FreshClass]). [Main] shuffles the tests
// as go test -shuffle does and the reports name the seed; each child runs
// its one scenario alone, so state one scenario leaves for another shows
// whatever order, -run or shard selects.
//
// # Classes and the verdict
//
// Every run is made, even after a divergence (until [Config.Budget];
// [Config.FailFast] stops at the first differing run, for local use). Runs
// are grouped into classes by (pin key, blake3 of the output, chain digest
// of the tape with the allowlisted fields stripped, error kind, and for a
// cassette miss what the misses mean: the set of their changes,
// [cassettes.MissError.Change], so runs whose misses one change to the code
// explains are one class whichever of several concurrent requests missed
// first, and a request field that differs between runs makes classes of
// its own), largest first; each class lists its size, first run and
// child processes. The
// verdict is PASS (one class, no error), NONDETERMINISTIC (more than one
// class, whatever mix of successes and failures) or BROKEN (one class of
// failed runs). The first runs of the two largest classes are compared in
// full: the first differing output byte with excerpts, the first divergent
// event ([events.Compare]: index, kind, field, payload offset, field-level
// diff, causal chain), the pins that differ, and whether the requests sent
// through [Run.Client] differ ("the request itself varies": each run sent
// a request the other never sent, compared as sets whatever order
// concurrent calls arrived in), with the fields that differ, and, when
// several recorded interactions match one request, which one answered
// each lane's request in each class ([Divergence].Assignment: the outcome
// depends on the arrival order of identical concurrent requests; see
// [Config.AssignByLane]). Only a
// BROKEN verdict caused by the cassettes (a miss, an SDK's API version,
// interactions left unused, no cassette) suggests re-recording, with one
// command, and not after a gate that just recorded; the cassettes a Run
// opens name no command, and the report renders each miss itself from
// the typed [cassettes.MissError], what missed and how it differs from its
// recording, naming the cassette by the path relative to the package
// directory, so it reads the same in every process. A miss on a cloud
// credential or metadata service (error kind "credentials") says what
// the SDK needs in replay instead; one that differs from its recording
// only in the API version its SDK sends (error kind "api-version") says
// which, once.
//
// A failing report ([Report.Text]) leads with the answer in one screen:
// the verdict and the class sizes in one line (summarised past eight
// classes: "48 classes of 1 run"), what differs (the request, pins,
// output bytes and first divergent event above, the failing runs'
// errors, such as what a cassette miss asked and how it differs from its
// recording, and leaked goroutines), the cause when one was found, and
// the one command to run next. The classes, the evidence, the other
// commands and the run's facts follow, and a section only where it
// explains the answer: the child processes' environments when they
// differ, the stream chunking when it is the cause, the allowlist when
// event tapes were compared. report.json holds all of it. Every command
// a report prints is also data ([gate.Command]: purpose, argv and the
// directory to run it in) and runs as printed in the caller's module,
// from the module root. A passing report is a few lines.
//
// The allowlist ([Config.Allowlist]) names Event struct fields
// ([events.FieldByName]), each with a reason; every other field is
// compared.
//
// # Evidence
//
// A gate that does not pass writes, under DIR/<scenario>/, each file
// atomically: <scenario>.bundle.zst, one bundle (package bundle's
// multi-run format) holding the kept run of each class (its
// first run, up to 16 classes) with its pins, output bytes, tape and
// error; report.txt; and report.json. The report names the command that
// compares the runs of the two largest classes inside that bundle
// (bundle diff BUNDLE -runs A,B), in the caller's module. DIR is
// [Config.ArtifactDir]; in Check by default -gate.evidence/<test key>,
// else evidence/<package and test> in the -gate.results folder, else
// t.ArtifactDir() under go test -artifacts, else
// codegenie/evidence/<test key> in the user's cache directory
// (os.UserCacheDir, else os.TempDir), where <test key> names the package
// and the test (with a digest of them and of the module root): it
// outlives the test, so the printed commands and a result file's
// evidence find it. Each failing gate gets its own numbered folder in it,
// and the newest 8 are kept.
// The harness writes nothing else and nothing into the source tree.
//
// # Gate flags and result files
//
// A [Report] embeds a [gate.Outcome], the one definition of what a gate
// found that a result file and a ledger entry share ([Report.Result]).
// Package gate holds the gate's CI plumbing and documents it: the -gate.*
// test flags (a shard of a CI matrix, a results folder, the summary
// file, the evidence folder) and their environment variables, the result
// file format, the merge of shards and its summary. Under the flags,
// Check skips a scenario of another shard (a Skipped report and result),
// writes one result file per Check, and while a gate makes its runs
// keeps a result of verdict CRASHED (package gate, Result files), so a
// test process that dies still leaves a result. [Main] prints the
// summary of every Check of the process. A test process appends nothing
// to a ledger: cmd/gate-merge -ledger appends the verdicts of result
// folders.
package harness
