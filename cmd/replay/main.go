// Command replay verifies, shows, rebuilds, compares and merges codegenie
// replay bundles (package github.com/codegenie/codegenie/replay), offline.
//
// Usage:
//
//	replay verify BUNDLE...                 check every file and record
//	replay show BUNDLE [-run ID] [-from N] [-to M] [-payload]
//	                                        list the events with seq in [N, M]
//	replay state BUNDLE [-run ID] [-at N]   a fallback run's state after seq N
//	replay diff A [B] [-runs X,Y] [-json]   first divergence of two runs
//	replay merge [-force] OUT IN...         merge bundles of one scenario
//
// A BUNDLE is a bundle directory or a single .bundle.zst file; a bundle
// holds one run or many. -run names a run of a bundle of several runs;
// diff compares run X of A with run Y of B (of A when B is not given), or
// the only run of each. state rebuilds the state of package fallback's
// pipeline (fallback.State). merge writes OUT as a single file when its
// name ends in .zst, else as a directory; it never replaces an OUT that is
// not a bundle, and replaces a bundle only with -force.
//
// show, state, diff and merge read untrusted bundles within bounds
// (replay.Options): -max-blob-memory N (bytes of blobs held in memory),
// -max-payload-bytes N (bytes of payloads read) and -max-loaded-bytes N
// (bytes of the bundles diff and merge hold whole: events and their
// strings); a bundle that needs more fails, naming the flag to raise.
//
// Exit status: 0 when the bundles are valid and (diff) the runs do not
// diverge; 1 when a bundle is invalid or the runs diverge; 2 for usage
// errors. Messages go to standard error, prefixed "replay:".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/codegenie/codegenie/replay"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

const usage = `usage:
  replay verify BUNDLE...
  replay show BUNDLE [-run ID] [-from N] [-to M] [-payload]
  replay state BUNDLE [-run ID] [-at N]
  replay diff A [B] [-runs X,Y] [-json]
  replay merge [-force] OUT IN...
flags of show, state, diff and merge: -max-blob-memory N, -max-payload-bytes N,
  -max-loaded-bytes N
`

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// errDiverged reports that diff found a divergence: exit status 1, with the
// report already on standard output.
var errDiverged = errors.New("the runs diverge (see the report above)")

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "replay: ") {
		msg = "replay: " + msg
	}
	var le *replay.LimitError
	if errors.As(err, &le) {
		msg += fmt.Sprintf("\nreplay: to read this bundle anyway, pass -%s N (bytes; now %d)", limitFlagNames[le.Limit], le.Value)
	}
	fmt.Fprintln(stderr, msg)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprint(stderr, usage)
		return 2
	}
	return 1
}

// run runs one subcommand; stdin is not read.
func run(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	if len(args) == 0 {
		return &usageError{"missing subcommand"}
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("replay "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch cmd {
	case "verify":
		return verifyCmd(ctx, fs, args, stdout)
	case "show":
		return showCmd(ctx, fs, args, stdout)
	case "state":
		return stateCmd(ctx, fs, args, stdout)
	case "diff":
		return diffCmd(ctx, fs, args, stdout)
	case "merge":
		return mergeCmd(ctx, fs, args, stdout)
	case "help", "-h", "-help", "--help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return &usageError{fmt.Sprintf("unknown subcommand %q", cmd)}
}

// limitFlagNames maps the bounds of replay.Options to their flags.
var limitFlagNames = map[string]string{"MaxBufferedBlobs": "max-blob-memory", "MaxPayloadBytes": "max-payload-bytes", "MaxLoadedBytes": "max-loaded-bytes"}

// limitFlags registers the flags that raise the bounds of a read.
func limitFlags(fs *flag.FlagSet) *replay.Options {
	o := &replay.Options{}
	fs.Int64Var(&o.MaxBufferedBlobs, limitFlagNames["MaxBufferedBlobs"], replay.DefaultMaxBufferedBlobs, "bytes of blobs held in memory at most")
	fs.Int64Var(&o.MaxPayloadBytes, limitFlagNames["MaxPayloadBytes"], replay.DefaultMaxPayloadBytes, "bytes of payloads read at most")
	fs.Int64Var(&o.MaxLoadedBytes, limitFlagNames["MaxLoadedBytes"], replay.DefaultMaxLoadedBytes, "bytes of bundles held whole (diff, merge) at most: events and their strings")
	return o
}

// parse parses flags placed before, between or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, &usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
