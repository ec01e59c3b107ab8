package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/codegenie/codegenie/cassettes/refresh"
	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/internal/atomicfile"
)

// errDrifted: -check found drift (exit status 3).
var errDrifted = errors.New("the re-recorded cassettes drifted")

// command is what main injects; tests set the module directory, the
// environment and the clock.
type command struct {
	dir string           // the module's directory ("": the current one)
	env []string         // the go command's and the tests' environment (nil: this process's)
	now func() time.Time // nil: time.Now
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return command{}.run(ctx, args, stdin, stdout, stderr)
}

func (cmd command) run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	o, err := parseFlags(args)
	if h := (*helpRequested)(nil); errors.As(err, &h) {
		_, err = io.WriteString(stdout, h.text)
		return err
	}
	if err != nil {
		return err
	}
	cfg := refresh.Config{
		Dir: cmd.dir, Packages: list(o.pkgs), Run: o.run, Cassettes: o.cassettes, Expired: o.expired,
		Force: o.force, Reason: o.reason, Env: cmd.env, Log: stderr, Now: cmd.now,
		Review: review.Config{Goldens: list(o.goldens), GoldenCommand: o.goldenCmd},
	}
	if o.prices != "" {
		if cfg.Review.Prices, err = review.ReadPrices(o.prices); err != nil {
			return usagef("-prices: %v", err)
		}
	}
	if o.recover {
		var dirs []string
		if o.dir != "" {
			dirs = []string{o.dir}
		}
		cfg.Log = stdout
		return cfg.Recover(ctx, dirs...)
	}
	found, err := cfg.Find(ctx)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		fmt.Fprintf(stdout, "refresh-cassettes: the tests of %s open no cassette%s; nothing to do\n", o.pkgs, selection(o))
		return nil
	}
	if o.dryRun {
		return dryRun(cfg, o, found, stdout)
	}
	staged, err := cfg.Record(ctx, found)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := staged.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	rev, err := staged.Review(ctx)
	if err != nil {
		return err
	}
	if err := writeReview(rev, o.reviewDir, stdout); err != nil {
		return err
	}
	if o.check && rev.Drifted {
		return fmt.Errorf("%w: see the review above; nothing was applied", errDrifted)
	}
	if err := staged.Parity(ctx); err != nil {
		return err
	}
	if o.check {
		fmt.Fprintln(stdout, "\nrefresh-cassettes: -check: nothing drifted, and the tests pass on the re-recorded cassettes; nothing was applied")
		return nil
	}
	applied, err := staged.Apply(ctx)
	if err != nil {
		return err
	}
	summary(rev, applied, stdout)
	return nil
}

// selection says what the flags and arguments selected, for a message.
func selection(o *options) string {
	s := ""
	if o.run != "" {
		s += fmt.Sprintf(" (tests matching -run %q)", o.run)
	}
	if len(o.cassettes) > 0 {
		s += fmt.Sprintf(" matching %q", o.cassettes)
	}
	if o.expired {
		s += " past its maximum age"
	}
	return s
}

// writeReview prints the review's Markdown and, with -review DIR,
// writes review.md and review.json there.
func writeReview(rev *review.Review, dir string, stdout io.Writer) error {
	var md, js bytes.Buffer
	if err := rev.Markdown(&md); err != nil {
		return err
	}
	if err := rev.WriteJSON(&js); err != nil {
		return err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			data []byte
		}{{"review.md", md.Bytes()}, {"review.json", js.Bytes()}} {
			if err := atomicfile.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
				return err
			}
		}
	}
	_, err := stdout.Write(md.Bytes())
	return err
}

// summary says what an applied refresh changed and what to do next.
func summary(rev *review.Review, applied []string, stdout io.Writer) {
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "\nrefresh-cassettes: no cassette changed; every file is as it was")
		return
	}
	fmt.Fprintf(stdout, "\nrefresh-cassettes: applied %d cassettes:\n", len(applied))
	for _, p := range applied {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	if len(rev.Goldens) > 0 && rev.GoldenCommand != "" {
		fmt.Fprintf(stdout, "refresh the golden files that pin them:\n\t%s\n", rev.GoldenCommand)
	}
	fmt.Fprintln(stdout, "then commit the cassettes and their manifest.json with the change that moved them.")
}
