package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// subcommand is one subcommand: setup registers its flags and returns
// what runs it on the positional arguments.
type subcommand struct {
	name, synopsis, doc string
	setup               func(fs *flag.FlagSet) action
}

// action runs a subcommand: its result goes to stdout, notes to stderr.
type action func(ctx context.Context, pos []string, stdout, stderr io.Writer) error

// subcommands in the order the help lists them.
var subcommands = []subcommand{
	{"verify", "BUNDLE...", "check every file and record of each bundle", verifyCmd},
	{"show", "BUNDLE [-run ID] [-from N] [-to M] [-payload]", "list the events with seq in [N, M]", showCmd},
	{"state", "BUNDLE [-run ID] [-at N]", "print a run's state after seq N as the generic fold rebuilds it, which needs no pipeline: per event kind, the count and the last event's seq, payload digest and payload (a pipeline's own state needs its Folder: bundle.Config.FoldTo in your module)", stateCmd},
	{"diff", "A [B] [-runs X,Y] [-json]", "print the first divergence of two runs: run X of A and run Y of B (of A when B is not given), or the only run of each", diffCmd},
	{"merge", "[-force] OUT IN...", "merge bundles of one scenario into OUT (a single file when OUT ends in .zst, else a directory)", mergeCmd},
}

func verifyCmd(_ *flag.FlagSet) action {
	return func(ctx context.Context, pos []string, w, _ io.Writer) error {
		if len(pos) == 0 {
			return &usageError{msg: "verify: want at least one BUNDLE"}
		}
		var errs []error
		for _, p := range pos {
			rep, err := bundle.Config{}.Verify(ctx, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(w, "ok %s: %s form, scenario %s, %d runs, %d events, bundle digest %s\n",
				p, rep.Form, excerpt.Quote(rep.Metadata.Scenario), len(rep.Runs), rep.Events, rep.Digest)
			for _, r := range rep.Runs {
				fmt.Fprintf(w, "   run %s: %d events, chain %s, output %d bytes", excerpt.Quote(r.ID), r.Events, r.Chain, r.OutputSize)
				if r.Error != "" {
					fmt.Fprintf(w, ", error %s", excerpt.Quote(r.Error))
				}
				fmt.Fprintln(w)
			}
			if s := rep.Snapshot; s != nil {
				fmt.Fprintf(w, "   snapshot of run %s at seq %d (fold %s)\n", excerpt.Quote(s.Run), s.At, excerpt.Quote(s.Fold))
			}
		}
		return errors.Join(errs...)
	}
}

func showCmd(fs *flag.FlagSet) action {
	o := limitFlags(fs)
	runID := fs.String("run", "", "show only the run with this `ID`")
	from := fs.Uint64("from", 0, "first seq to show")
	to := fs.Uint64("to", 0, "last seq to show (0: the end)")
	payload := fs.Bool("payload", false, "print whole payloads, as text when they are printable")
	return func(ctx context.Context, pos []string, w, _ io.Writer) error {
		if len(pos) != 1 {
			return &usageError{msg: "show: want exactly one BUNDLE"}
		}
		if *to != 0 && *to < *from {
			return &usageError{msg: fmt.Sprintf("show: -to %d is before -from %d", *to, *from)}
		}
		r, err := o.Open(ctx, pos[0])
		if err != nil {
			return err
		}
		defer r.Close()
		runs := r.Runs()
		for i := 0; ; i++ {
			run, e, err := r.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			id := runs[run].ID
			if (*runID != "" && id != *runID) || e.Seq < *from || (*to != 0 && e.Seq > *to) {
				continue
			}
			showEvent(w, i, id, len(runs) > 1, e, *payload)
		}
	}
}

func showEvent(w io.Writer, i int, run string, many bool, e events.Event, payload bool) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "#%d ", i)
	if many {
		fmt.Fprintf(&sb, "run %s ", excerpt.Quote(run))
	}
	fmt.Fprintf(&sb, "seq %d parent %d %s", e.Seq, e.Parent, excerpt.Quote(string(e.Kind)))
	if e.Lane != "" {
		fmt.Fprintf(&sb, " lane %q", e.Lane)
	}
	fmt.Fprintf(&sb, " payload %d bytes %s", len(e.Payload), e.PayloadDigest)
	if !e.EmittedAt.IsZero() {
		fmt.Fprintf(&sb, " at %s", e.EmittedAt.Format("2006-01-02T15:04:05.000000000Z07:00"))
	}
	fmt.Fprintf(&sb, "\n    %s\n", payloadText(e.Payload, payload))
	io.WriteString(w, sb.String())
}

// excerptLen is the bytes of a payload show prints without -payload.
const excerptLen = 120

// payloadText renders a payload for show: printable text as it is (JSON
// keeps its own escapes, not escaped again), whole with all or cut at
// excerptLen bytes; anything else escaped (excerpt.Around), so no control
// byte reaches the terminal. With all, the lines of a multi-line text are
// indented.
func payloadText(p []byte, all bool) string {
	if !printable(p, all) {
		radius := excerptLen
		if all {
			radius = len(p)
		}
		return excerpt.Around(p, 0, radius)
	}
	if all {
		return strings.ReplaceAll(string(p), "\n", "\n    ")
	}
	s := excerpt.Head(string(p), excerptLen)
	if len(s) < len(p) {
		s += "…"
	}
	return s
}

// printable reports whether p is UTF-8 of printable runes (and, with
// lines, newlines and tabs).
func printable(p []byte, lines bool) bool {
	if !utf8.Valid(p) {
		return false
	}
	for _, r := range string(p) {
		if !strconv.IsPrint(r) && !(lines && (r == '\n' || r == '\t')) {
			return false
		}
	}
	return true
}

func stateCmd(fs *flag.FlagSet) action {
	o := limitFlags(fs)
	runID := fs.String("run", "", "the run's `ID` (needed when the bundle holds several)")
	at := fs.Uint64("at", 0, "seq to stop after (0: the end)")
	return func(ctx context.Context, pos []string, w, stderr io.Writer) error {
		if len(pos) != 1 {
			return &usageError{msg: "state: want exactly one BUNDLE"}
		}
		ref := bundle.RunRef{Path: pos[0], Run: *runID}
		f, err := o.FoldTo(ctx, ref, *at)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(struct {
			Fold  string        `json:"fold"`
			State bundle.Folder `json:"state"`
		}{f.FoldName(), f}, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
		return noteSnapshotFold(ctx, o, ref, *at, f.FoldName(), stderr)
	}
}

// noteSnapshotFold tells, when the bundle's snapshot of the run was made
// by a fold other than the one state used (a pipeline's, which this
// command does not link), how to get that fold's state.
func noteSnapshotFold(ctx context.Context, o *bundle.Config, ref bundle.RunRef, at uint64, used string, stderr io.Writer) error {
	r, err := o.Open(ctx, ref.Path)
	if err != nil {
		return err
	}
	s := r.Snapshot()
	if err := r.Close(); err != nil {
		return err
	}
	if s == nil || (ref.Run != "" && s.Run != ref.Run) || s.Fold == used {
		return nil
	}
	_, err = fmt.Fprintf(stderr, "bundle: state: the bundle's snapshot of run %s was made by fold %s, which this command does not link (it links no pipeline); the state above is the generic fold's. "+
		"For that fold's state, call bundle.Config{}.FoldTo(ctx, bundle.RunRef{Path: %q, Run: %q}, %d, yourFold) with the pipeline's Folder, from a test or a main of your module\n",
		excerpt.Quote(s.Run), excerpt.Quote(s.Fold), ref.Path, s.Run, at)
	return err
}

func diffCmd(fs *flag.FlagSet) action {
	o := limitFlags(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	runs := fs.String("runs", "", "compare run X of A with run Y of B (of A when B is not given), given as `X,Y`")
	return func(ctx context.Context, pos []string, w, _ io.Writer) error {
		a, b, err := diffRefs(pos, *runs)
		if err != nil {
			return err
		}
		d, err := o.Diff(ctx, a, b)
		if err != nil {
			return err
		}
		if *asJSON {
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
}

// diffRefs turns diff's arguments into the two runs to compare.
func diffRefs(pos []string, runs string) (a, b bundle.RunRef, err error) {
	var x, y string
	if runs != "" {
		var ok bool
		if x, y, ok = strings.Cut(runs, ","); !ok || x == "" || y == "" {
			return a, b, &usageError{msg: fmt.Sprintf("diff: -runs %s: want two run IDs, X,Y", excerpt.Quote(runs))}
		}
	}
	switch {
	case len(pos) == 2:
		return bundle.RunRef{Path: pos[0], Run: x}, bundle.RunRef{Path: pos[1], Run: y}, nil
	case len(pos) == 1 && runs != "":
		return bundle.RunRef{Path: pos[0], Run: x}, bundle.RunRef{Path: pos[0], Run: y}, nil
	}
	return a, b, &usageError{msg: "diff: want two bundles A B, or one bundle and -runs X,Y"}
}

func mergeCmd(fs *flag.FlagSet) action {
	o := limitFlags(fs)
	force := fs.Bool("force", false, "replace OUT if it is a bundle (anything else is never replaced)")
	return func(ctx context.Context, pos []string, w, _ io.Writer) error {
		if len(pos) < 2 {
			return &usageError{msg: "merge: want OUT and at least one IN"}
		}
		out, ins := pos[0], pos[1:]
		m, err := o.Merge(ctx, ins...)
		if err != nil {
			return err
		}
		o.Force = *force
		if strings.HasSuffix(out, ".zst") {
			err = o.WriteFile(ctx, out, m)
		} else {
			err = o.Write(ctx, out, m)
		}
		if err != nil {
			return err
		}
		n := 0
		for _, r := range m.Runs {
			n += len(r.Events)
		}
		_, err = fmt.Fprintf(w, "merged %d inputs into %s: %d runs, %d events\n", len(ins), out, len(m.Runs), n)
		return err
	}
}
