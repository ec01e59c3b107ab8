// Command replay verifies, shows, rebuilds, compares and merges codegenie
// replay bundles (package github.com/codegenie/codegenie/replay), offline.
//
// Usage:
//
//	replay verify BUNDLE...             check every file and record
//	replay show BUNDLE [-from N] [-to M] [-payload]
//	                                    list the events with seq in [N, M]
//	replay state BUNDLE [-at N]         the run's state after seq N (default: the end)
//	replay diff A B [-json]             first divergent event, field diff, causal chain
//	replay merge [-force] OUT IN...     merge bundles of one run's lanes or shards
//
// show, state, diff and merge read untrusted bundles within bounds
// (replay.Options): -max-blob-memory N (bytes of blobs held in memory)
// and -max-payload-bytes N (bytes of payloads read); a bundle that needs
// more fails, naming the flag to raise.
//
// A BUNDLE is a bundle directory or a single .bundle.zst file. merge
// writes OUT as a single file when its name ends in .zst, else as a
// directory. It never replaces an OUT that is not a bundle, and replaces
// a bundle only with -force.
//
// Exit status: 0 when the bundles are valid and (diff) do not diverge; 1
// when a bundle is invalid or the runs diverge; 2 for usage errors.
// Messages go to standard error, prefixed "replay:".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/codegenie/codegenie/internal/excerpt"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/replay"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

const usage = `usage:
  replay verify BUNDLE...
  replay show BUNDLE [-from N] [-to M] [-payload]
  replay state BUNDLE [-at N]
  replay diff A B [-json]
  replay merge [-force] OUT IN...
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

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return &usageError{"missing subcommand"}
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("replay "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch cmd {
	case "verify":
		pos, err := parse(fs, args)
		if err != nil {
			return err
		}
		if len(pos) == 0 {
			return &usageError{"verify: want at least one BUNDLE"}
		}
		return verify(ctx, stdout, pos)
	case "show":
		o := limitFlags(fs)
		from := fs.Uint64("from", 0, "first seq to show")
		to := fs.Uint64("to", 0, "last seq to show (0: the end)")
		payload := fs.Bool("payload", false, "print whole payloads")
		pos, err := parse(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return &usageError{"show: want exactly one BUNDLE"}
		}
		if *to != 0 && *to < *from {
			return &usageError{fmt.Sprintf("show: -to %d is before -from %d", *to, *from)}
		}
		return show(ctx, stdout, *o, pos[0], *from, *to, *payload)
	case "state":
		o := limitFlags(fs)
		at := fs.Uint64("at", 0, "seq to stop after (0: the end)")
		pos, err := parse(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return &usageError{"state: want exactly one BUNDLE"}
		}
		return state(ctx, stdout, *o, pos[0], *at)
	case "diff":
		o := limitFlags(fs)
		asJSON := fs.Bool("json", false, "print the report as JSON")
		pos, err := parse(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 2 {
			return &usageError{"diff: want two bundles, A and B"}
		}
		return diff(ctx, stdout, *o, pos[0], pos[1], *asJSON)
	case "merge":
		o := limitFlags(fs)
		force := fs.Bool("force", false, "replace OUT if it is a bundle (anything else is never replaced)")
		pos, err := parse(fs, args)
		if err != nil {
			return err
		}
		if len(pos) < 2 {
			return &usageError{"merge: want OUT and at least one IN"}
		}
		return merge(ctx, stdout, *o, pos[0], pos[1:], *force)
	case "help", "-h", "-help", "--help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return &usageError{fmt.Sprintf("unknown subcommand %q", cmd)}
}

// limitFlagNames maps the bounds of replay.Options to their flags.
var limitFlagNames = map[string]string{"MaxBufferedBlobs": "max-blob-memory", "MaxPayloadBytes": "max-payload-bytes"}

// limitFlags registers the flags that raise the bounds of a read.
func limitFlags(fs *flag.FlagSet) *replay.Options {
	o := &replay.Options{}
	fs.Int64Var(&o.MaxBufferedBlobs, limitFlagNames["MaxBufferedBlobs"], replay.DefaultMaxBufferedBlobs, "bytes of blobs held in memory at most")
	fs.Int64Var(&o.MaxPayloadBytes, limitFlagNames["MaxPayloadBytes"], replay.DefaultMaxPayloadBytes, "bytes of payloads read at most")
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

func verify(ctx context.Context, w io.Writer, paths []string) error {
	var errs []error
	for _, p := range paths {
		rep, err := replay.Verify(ctx, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		snap := ""
		if rep.Snapshot != nil {
			snap = fmt.Sprintf(", snapshot at seq %d", *rep.Snapshot)
		}
		fmt.Fprintf(w, "ok %s: %s form, status %s, scenario %q, %d events, chain %s, bundle digest %s%s\n",
			p, rep.Form, rep.Metadata.Status, rep.Metadata.Scenario, rep.Events, rep.Chain, rep.Digest, snap)
	}
	return errors.Join(errs...)
}

func show(ctx context.Context, w io.Writer, o replay.Options, path string, from, to uint64, payload bool) error {
	r, err := o.Open(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	for i := 0; ; i++ {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.Seq < from || (to != 0 && e.Seq > to) {
			continue
		}
		fmt.Fprintf(w, "#%d seq %d parent %d %s", i, e.Seq, e.Parent, excerpt.Quote(string(e.Kind)))
		if e.Lane != "" {
			fmt.Fprintf(w, " lane %q", e.Lane)
		}
		fmt.Fprintf(w, " payload %d bytes %s", len(e.Payload), e.PayloadDigest)
		if !e.EmittedAt.IsZero() {
			fmt.Fprintf(w, " at %s", e.EmittedAt.Format("2006-01-02T15:04:05.000000000Z07:00"))
		}
		if payload {
			fmt.Fprintf(w, "\n    %s\n", excerpt.Around(e.Payload, 0, len(e.Payload)))
		} else {
			fmt.Fprintf(w, "\n    %s\n", excerpt.Around(e.Payload, 0, 120))
		}
	}
}

func state(ctx context.Context, w io.Writer, o replay.Options, path string, at uint64) error {
	st, err := o.ReplayTo(ctx, path, at)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func diff(ctx context.Context, w io.Writer, o replay.Options, a, b string, asJSON bool) error {
	d, err := o.Diff(ctx, a, b)
	if err != nil {
		return err
	}
	if asJSON {
		out, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", out); err != nil {
			return err
		}
	} else if err := d.Text(w); err != nil {
		return err
	}
	if d.Diverged() {
		return errDiverged
	}
	return nil
}

func merge(ctx context.Context, w io.Writer, lim replay.Options, out string, ins []string, force bool) error {
	var tapes [][]events.Event
	var meta replay.Metadata
	for i, p := range ins {
		b, err := lim.Load(ctx, p)
		if err != nil {
			return err
		}
		if i == 0 {
			meta = b.Metadata
		} else if b.Metadata.Pin != meta.Pin || b.Metadata.Scenario != meta.Scenario {
			return fmt.Errorf("merge: %s is pinned to run %q of scenario %q, %s to run %q of scenario %q: only tapes of one run merge",
				p, b.Metadata.Pin.RunKey, b.Metadata.Scenario, ins[0], meta.Pin.RunKey, meta.Scenario)
		}
		tapes = append(tapes, b.Events)
	}
	evs, err := replay.Merge(tapes...)
	if err != nil {
		return fmt.Errorf("merge %s: %w", strings.Join(ins, " "), err)
	}
	b := &replay.Bundle{Metadata: meta, Events: evs}
	o := replay.WriteOptions{Force: force}
	if strings.HasSuffix(out, ".zst") {
		err = o.WriteFile(ctx, out, b)
	} else {
		err = o.Write(ctx, out, b)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "merged %d inputs into %s: %d events, chain digest %s\n", len(ins), out, len(evs), events.ChainDigest(evs))
	return err
}
