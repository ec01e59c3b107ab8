// Command bundle verifies, shows, folds, compares and merges codegenie
// bundles (package github.com/codegenie/codegenie/bundle), offline.
//
// Usage:
//
//	bundle verify BUNDLE...                 check every file and record
//	bundle show BUNDLE [-run ID] [-from N] [-to M] [-payload]
//	                                        list the events with seq in [N, M]
//	bundle state BUNDLE [-run ID] [-at N]   a run's state after seq N
//	bundle diff A [B] [-runs X,Y] [-json]   first divergence of two runs
//	bundle merge [-force] OUT IN...         merge bundles of one scenario
//
// A BUNDLE is a bundle directory or a single .bundle.zst file; a bundle
// holds one run or many. -run names a run of a bundle of several runs;
// diff compares run X of A with run Y of B (of A when B is not given), or
// the only run of each. state prints the state the generic fold rebuilds
// (bundle.Config.FoldTo with no fold of the caller's): per event kind, the
// count and the last event's seq, payload digest and payload. The command
// links no pipeline, and a bundle only names the fold its snapshot was
// made by, never brings code; when that fold is not the generic one,
// state says so and how to fold the run with the pipeline's Folder in
// the user's module. merge writes OUT as a single file when its name ends
// in .zst, else as a directory; it never replaces an OUT that is not a
// bundle, and replaces a bundle only with -force.
//
// bundle -h describes every subcommand and flag; bundle SUBCOMMAND -h one
// subcommand.
//
// show, state, diff and merge read untrusted bundles within bounds
// (bundle.Config): -max-blob-memory N (bytes of blobs held in memory),
// -max-payload-bytes N (bytes of payloads read) and -max-loaded-bytes N
// (bytes of the bundles diff and merge hold whole: events and their
// strings); a bundle that needs more fails, naming the flag to raise.
//
// Exit status: 0 when the bundles are valid and (diff) the runs do not
// diverge; 1 when a bundle is invalid or the runs diverge; 2 for usage
// errors. Messages go to standard error, prefixed "bundle:".
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

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/internal/excerpt"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a command-line mistake: exit status 2. sub is the
// subcommand whose help follows the message, nil for the list of them.
type usageError struct {
	msg string
	sub *subcommand
}

func (e *usageError) Error() string { return e.msg }

// errDiverged reports that diff found a divergence: exit status 1, with the
// report already on standard output.
var errDiverged = errors.New("the runs diverge (see the report above)")

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "bundle: ") {
		msg = "bundle: " + msg
	}
	var le *bundle.LimitError
	if errors.As(err, &le) {
		msg += fmt.Sprintf("\nbundle: to read this bundle anyway, pass -%s N (bytes; now %d)", limitFlagNames[le.Limit], le.Value)
	}
	fmt.Fprintln(stderr, msg)
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.sub != nil {
			writeHelp(stderr, ue.sub)
		} else {
			fmt.Fprint(stderr, shortUsage())
		}
		return 2
	}
	return 1
}

// run runs one subcommand; stdin is not read. -h, as the subcommand or
// after it, prints the help to stdout.
func run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &usageError{msg: "missing subcommand"}
	}
	name, args := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		io.WriteString(stdout, intro)
		for i := range subcommands {
			writeHelp(stdout, &subcommands[i])
		}
		return nil
	}
	sub := lookup(name)
	if sub == nil {
		return &usageError{msg: fmt.Sprintf("unknown subcommand %s", excerpt.Quote(name))}
	}
	fs := flag.NewFlagSet("bundle "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	do := sub.setup(fs)
	pos, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeHelp(stdout, sub)
		return nil
	}
	if err != nil {
		return &usageError{msg: fmt.Sprintf("%s: %v", name, err), sub: sub}
	}
	err = do(ctx, pos, stdout, stderr)
	if ue, ok := err.(*usageError); ok {
		ue.sub = sub
	}
	return err
}

// intro heads the help.
const intro = `bundle verifies, shows, folds, compares and merges bundles, offline.
When a determinism gate (harness.Check) in your module fails, its report names
the bundles it wrote (the runs that differ); open them from your module's root,
or from anywhere the evidence was copied to:

	go run github.com/codegenie/codegenie/cmd/bundle diff run-a.bundle.zst run-b.bundle.zst
	go run github.com/codegenie/codegenie/cmd/bundle show run-a.bundle.zst -payload

A BUNDLE is a bundle directory or a single .bundle.zst file of one run or many.
Exit status: 0 when the bundles are valid and (diff) the runs do not diverge;
1 when a bundle is invalid or the runs diverge; 2 for usage errors.

`

// lookup returns the subcommand called name, or nil.
func lookup(name string) *subcommand {
	for i := range subcommands {
		if subcommands[i].name == name {
			return &subcommands[i]
		}
	}
	return nil
}

// shortUsage lists the subcommands, one line each.
func shortUsage() string {
	var sb strings.Builder
	sb.WriteString("usage:\n")
	for _, s := range subcommands {
		fmt.Fprintf(&sb, "  bundle %s %s\n", s.name, s.synopsis)
	}
	sb.WriteString("bundle -h describes every subcommand and flag\n")
	return sb.String()
}

// writeHelp writes sub's usage line, what it does and every flag with its
// description (flag.PrintDefaults).
func writeHelp(w io.Writer, sub *subcommand) {
	fs := flag.NewFlagSet("bundle "+sub.name, flag.ContinueOnError)
	sub.setup(fs)
	var sb strings.Builder
	fmt.Fprintf(&sb, "usage: bundle %s %s\n  %s\n", sub.name, sub.synopsis, sub.doc)
	fs.SetOutput(&sb)
	fs.PrintDefaults()
	sb.WriteString("\n")
	io.WriteString(w, sb.String())
}

// limitFlagNames maps the bounds of bundle.Config to their flags.
var limitFlagNames = map[string]string{"MaxBufferedBlobs": "max-blob-memory", "MaxPayloadBytes": "max-payload-bytes", "MaxLoadedBytes": "max-loaded-bytes"}

// limitFlags registers the flags that raise the bounds of a read.
func limitFlags(fs *flag.FlagSet) *bundle.Config {
	o, def := &bundle.Config{}, bundle.Config{}.WithDefaults()
	fs.Int64Var(&o.MaxBufferedBlobs, limitFlagNames["MaxBufferedBlobs"], def.MaxBufferedBlobs, "bytes of blobs held in memory at most")
	fs.Int64Var(&o.MaxPayloadBytes, limitFlagNames["MaxPayloadBytes"], def.MaxPayloadBytes, "bytes of payloads read at most")
	fs.Int64Var(&o.MaxLoadedBytes, limitFlagNames["MaxLoadedBytes"], def.MaxLoadedBytes, "bytes of bundles held whole (diff, merge) at most: events and their strings")
	return o
}

// parse parses flags placed before, between or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
