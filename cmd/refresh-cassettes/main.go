// Command refresh-cassettes re-records the cassettes of the Go module it
// runs in through the tests that own them, reviews what changed, proves
// the new cassettes replay, and applies them: run it from your module's
// root, where go test runs.
//
// Usage:
//
//	go run github.com/codegenie/codegenie/cmd/refresh-cassettes [flags] [CASSETTE...]
//
// For example, after changing a prompt:
//
//	go run github.com/codegenie/codegenie/cmd/refresh-cassettes -dry-run
//	go run github.com/codegenie/codegenie/cmd/refresh-cassettes -review review/
//
// It finds every cassette the module's tests open (it runs the tests of
// each package that links package cassettes one by one, listing what
// each cassettes.Open opens), re-records each through the test that owns
// it with the record switch into a staging directory (through that
// test's own code: its cassettes.Redirect to a local fake, or the live
// API with the keys its test reads from the environment), prints the
// review (package cassettes/review: per interaction the request's field
// diff, the answer folded from its stream with a word diff, tool calls,
// stop reasons, tokens and cost; per cassette the drift class), replays
// the staged cassettes through the same tests, which must pass, and
// applies those that changed, atomically per cassette directory, with
// the manifest's history entry. See package cassettes/refresh.
//
// CASSETTE arguments select cassettes by their path from the module root
// (path.Match patterns; one without a "/" matches the file name; "DIR/..."
// everything under DIR).
//
// Flags:
//
//	-pkg PATTERNS    the packages whose tests run, comma-separated
//	                 (default ./...)
//	-run REGEX       only the tests whose top-level name matches
//	-expired         only the cassettes past their maximum age
//	-dry-run         list the cassettes, the tests that own them, the
//	                 hosts they call, and those stale because their SDK's
//	                 API version changed (see below); record and change
//	                 nothing
//	-check           record and review, and replay when nothing drifted;
//	                 apply nothing (exit 3 when something drifted)
//	-force           replace cassettes a manifest pins (needs -reason)
//	-reason TEXT     why they change; kept in the manifest history
//	-review DIR      also write review.md and review.json into DIR (the
//	                 Markdown is always printed)
//	-prices FILE     price table for the review's cost delta
//	-goldens DIRS    comma-separated directories of files that pin cassette
//	                 digests, listed in the review when they will move
//	-golden-cmd CMD  the command that refreshes them, printed with them
//	-recover         finish or discard what a killed refresh left in the
//	                 module's cassette directories (or in -dir), verify
//	                 them, and exit
//	-dir DIR         with -recover: only this cassette directory
//
// -dry-run runs the tests as the refresh does to find the cassettes, in
// replay, and lists beside each cassette whose tests missed: "stale",
// naming the change (header Anthropic-Version "2023-06-01" != "...", a
// version segment or beta parameter of the URL), when every miss
// differed from its recording only in the API version its SDK sends
// (the SDK was upgraded since the recording, and a new API version can
// change the answer); "misses" otherwise. It ends with the command that
// re-records the stale ones.
//
// A refresh that changed nothing leaves every file byte for byte as it
// was: timing measured again that is only noise keeps the recorded one
// (see Re-recording and timing in package cassettes).
//
// # Exit status
//
// 0 success (with -check: nothing drifted), 1 failure (the message says
// what, if anything, was changed), 2 usage error, 3 with -check:
// something drifted (the review says what). A scheduled job runs -check
// (with -expired, only on the cassettes past their maximum age) and
// opens an issue on 3.
//
// The review goes to standard output, so a CI job can post it on the pull
// request; progress goes to standard error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err and maps it to the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "refresh-cassettes: %v\n", err)
	if errors.Is(err, errDrifted) {
		return 3
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, usageLine+"\nrefresh-cassettes -h describes every flag")
		return 2
	}
	return 1
}
