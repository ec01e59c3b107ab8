// Command refresh-cassettes re-records the LLM cassettes the determinism
// gate replays: one cassette per fixture scenario and path (happy, retry),
// recorded through the real pipeline against the live API (or any
// compatible server given with -base-url), redacted, scanned for secrets,
// and committed to the cassette directory and its manifest atomically.
//
// Usage:
//
//	ANTHROPIC_API_KEY=... go run ./cmd/refresh-cassettes [flags]
//
// Flags:
//
//	-run REGEX     record only cassettes whose "scenario/path" matches
//	-base-url URL  send requests to this API root (default the real API);
//	               cassettes always name the default root, so they replay
//	               with the default configuration
//	-dir DIR       the cassette directory (default cassettes/testdata)
//	-dry-run       list what would be re-recorded and exit
//	-force         allow replacing pinned cassettes (needs -reason)
//	-reason TEXT   why pinned cassettes change; kept in the manifest history
//	-recover       finish or discard what a killed refresh left in -dir
//	               (see below), verify the directory, and exit
//
// The key is read from ANTHROPIC_API_KEY; it is sent to the API only and
// never written. Exit status: 0 success, 1 failure, 2 usage error.
//
// Every cassette is first recorded into a staging folder (DIR/.refresh-*,
// ignored by git) and checked; only when all of them succeeded are they
// moved into place with the new manifest (see cassettes.Apply), all or
// nothing as readers see it. A failed refresh leaves the old cassettes and
// manifest as they were. A process killed while moving files leaves a
// journal that the gate reports and that -recover, or the next refresh,
// completes; a staging folder from a process killed earlier is removed by
// the next run.
//
// After a refresh that changed cassettes, refresh the golden digests
// (go test ./properties/ -run Golden -update) and commit cassettes,
// manifest and goldens together.
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
		apiKey:    os.Getenv("ANTHROPIC_API_KEY"),
		transport: http.DefaultTransport,
		now:       time.Now,
	}
	err := cfg.run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err and maps it to the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "refresh-cassettes: %v\n", err)
		fmt.Fprintln(stderr, "usage: refresh-cassettes [-run REGEX] [-base-url URL] [-dir DIR] [-dry-run] [-force -reason TEXT] | -recover [-dir DIR]")
		return 2
	}
	fmt.Fprintf(stderr, "refresh-cassettes: %v\n", err)
	return 1
}
