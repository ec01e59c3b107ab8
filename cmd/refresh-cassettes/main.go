// Command refresh-cassettes re-records the LLM cassettes the determinism
// gate replays: one cassette per fixture scenario and path (happy, retry),
// recorded through the real pipeline against the live API (or any
// compatible server given with -base-url), redacted, scanned for secrets,
// reviewed, proven to replay, and committed to the cassette directory and
// its manifest atomically.
//
// Usage:
//
//	ANTHROPIC_API_KEY=... go run ./cmd/refresh-cassettes [flags]
//
// Flags:
//
//	-run REGEX       record only cassettes whose "scenario/path" matches
//	-expired         record only the cassettes past their maximum age (the
//	                 manifest's max_age, judged at the current time against
//	                 each cassette's recorded_at)
//	-base-url URL    send requests to this API root (default the real API);
//	                 cassettes always name the default root, so they replay
//	                 with the default configuration
//	-dir DIR         the cassette directory (default cassettes/testdata)
//	-dry-run         list what would be re-recorded and exit
//	-check           record into a staging folder, print the review, apply
//	                 nothing (see Exit status)
//	-force           allow replacing pinned cassettes (needs -reason)
//	-reason TEXT     why pinned cassettes change; kept in the manifest history
//	-review DIR      where review.md and review.json go (default: a new
//	                 directory under the system's temporary directory)
//	-prices FILE     price table for the review's cost delta (default: the
//	                 table built into package cassettes/review)
//	-goldens DIR     golden files that pin cassette digests, listed in the
//	                 review when they will move (default
//	                 properties/testdata/golden, skipped if absent)
//	-golden-cmd CMD  the command that refreshes them (default
//	                 go test ./properties/ -run Golden -update)
//	-parity-runs N   replays of each staged cassette before apply (default
//	                 and minimum: the gate's floor, 20)
//	-recover         finish or discard what a killed refresh left in -dir
//	                 (see below), verify the directory (warning about
//	                 cassettes past their maximum age), and exit
//
// The key is read from ANTHROPIC_API_KEY; it is sent to the API only and
// never written.
//
// # Exit status
//
// 0 success (with -check: nothing drifted), 1 failure (the message says
// what, if anything, was changed), 2 usage error, 3 with -check: something drifted (the review
// says what). A scheduled job runs -check and opens an issue on 3.
//
// # What a refresh does
//
// Every cassette is first recorded into a staging folder (DIR/.refresh-*,
// ignored by git). Then:
//
//  1. The review (package cassettes/review) compares the staged cassettes
//     with those they replace: per interaction added, removed or changed,
//     the request's field diff, the answer folded from its stream with a
//     word diff, tokens and cost, a drift class, and the golden files that
//     will move with -golden-cmd. It is printed as Markdown (paste it into
//     the pull request) and written to -review as review.md and review.json.
//     With -check the command stops here.
//  2. A pinned cassette whose digest changes needs -force -reason.
//  3. Parity: each staged cassette is replayed through the pipeline under
//     the gate's runner (harness.Config.Iterate, -parity-runs runs) and must
//     give one outcome, the one its recording run gave (the transform's
//     diff, or the pipeline's rejection of the answer). Otherwise nothing is
//     applied and the divergence report is printed and written to -review.
//  4. Apply moves the staged cassettes into place with the new manifest
//     (see cassettes.Apply), all or nothing as readers see it, recording
//     each cassette's recorded_at (the time this command recorded it).
//
// A refresh holds the directory's refresh lock (see cassettes.LockDir)
// from recording to applying, so a second refresh of the same directory,
// or a test saving a cassette there with -cassettes.record, waits up to a
// minute and then fails, having changed nothing.
//
// A refresh that fails before applying leaves the old cassettes and
// manifest as they were, and says so. One that fails while moving files
// in names the files it had already replaced and what -recover will do.
// A process killed while moving files leaves a journal that the gate
// reports and that -recover, or the next refresh, completes; a staging
// folder from a process killed earlier is removed by the next run.
//
// After a refresh that changed cassettes, run -golden-cmd and commit
// cassettes, manifest and goldens together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := config{
		//detvet:ignore the API key a refresh records with is read here only; cfg.run takes it injected
		apiKey:    os.Getenv("ANTHROPIC_API_KEY"),
		transport: http.DefaultTransport,
		now:       time.Now, //detvet:ignore main wires the real clock; cfg.run takes it injected
	}
	err := cfg.run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err and maps it to the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errDrifted) {
		fmt.Fprintf(stderr, "refresh-cassettes: %v\n", err)
		return 3
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "refresh-cassettes: %v\n", err)
		fmt.Fprintln(stderr, usageLine+"\nrefresh-cassettes -h describes every flag")
		return 2
	}
	fmt.Fprintf(stderr, "refresh-cassettes: %v\n", err)
	return 1
}
