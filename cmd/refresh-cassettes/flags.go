package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
)

// usageLine is the command's usage; -h adds what it does and every flag.
const usageLine = "usage: refresh-cassettes [-pkg PATTERNS] [-run REGEX] [-expired] [-dry-run | -check | -force -reason TEXT] [-review DIR] [-prices FILE] [-goldens DIRS] [-golden-cmd CMD] [CASSETTE...] | -recover [-dir DIR]"

// helpText is what -h prints above the flags: what the command does in
// the user's module, and an example.
const helpText = `refresh-cassettes re-records the cassettes of the Go module it runs in,
through the tests that own them, reviews what changed, replays the new
cassettes through the same tests, and applies those that changed. Run it
from your module's root:

	go run github.com/codegenie/codegenie/cmd/refresh-cassettes -dry-run
	go run github.com/codegenie/codegenie/cmd/refresh-cassettes -review review/

It runs the tests of each package that links package cassettes to find
the cassettes they open, re-records each through the test that opens it
(its cassettes.Redirect to a local fake, or the live API with the keys
its test reads from the environment) into a staging directory, prints
the review (answer diffs, tool calls, stop reasons, tokens, cost, drift
class), and applies what changed, atomically, with the manifest's
history entry. CASSETTE arguments select cassettes by their path from
the module root (path.Match; "DIR/..." selects everything under DIR).
-dry-run marks a cassette stale when every request of its tests that
missed in replay differed only in the API version its SDK sends (an SDK
upgrade), naming the change, and prints the command that re-records
those.

Exit status: 0 success, 1 failure, 2 usage error, 3 -check found drift.
`

// helpRequested is -h: text is the help and every flag, for standard
// output.
type helpRequested struct{ text string }

func (h *helpRequested) Error() string { return "help requested" }

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// options are the parsed flags.
type options struct {
	pkgs, run, reason, reviewDir, prices, goldens, goldenCmd, dir string
	expired, dryRun, check, force, recover                        bool
	cassettes                                                     []string
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fl := flag.NewFlagSet("refresh-cassettes", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&o.pkgs, "pkg", "./...", "the packages whose tests run, comma-separated `patterns`")
	fl.StringVar(&o.run, "run", "", "only the tests whose top-level name matches `regexp`")
	fl.BoolVar(&o.expired, "expired", false, "only the cassettes past their maximum age")
	fl.BoolVar(&o.dryRun, "dry-run", false, "list the cassettes, the tests that own them, the hosts they call, and those stale because their SDK's API version changed; record and change nothing")
	fl.BoolVar(&o.check, "check", false, "record and review, and replay when nothing drifted; apply nothing (exit 3 when something drifted)")
	fl.BoolVar(&o.force, "force", false, "replace cassettes a manifest pins (needs -reason)")
	fl.StringVar(&o.reason, "reason", "", "why the cassettes change: `text` kept in the manifest history")
	fl.StringVar(&o.reviewDir, "review", "", "also write review.md and review.json into `dir`")
	fl.StringVar(&o.prices, "prices", "", "price table `file` for the review's cost delta (default: the built-in table)")
	fl.StringVar(&o.goldens, "goldens", "", "comma-separated `dirs` of files that pin cassette digests, listed when they will move")
	fl.StringVar(&o.goldenCmd, "golden-cmd", "", "the `command` that refreshes those files, printed with them")
	fl.BoolVar(&o.recover, "recover", false, "finish or discard what a killed refresh left in the module's cassette directories, verify them, and exit")
	fl.StringVar(&o.dir, "dir", "", "with -recover: only this cassette `directory`")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var sb strings.Builder
			sb.WriteString(helpText + "\n" + usageLine + "\n\nFlags:\n")
			fl.SetOutput(&sb)
			fl.PrintDefaults()
			return nil, &helpRequested{sb.String()}
		}
		return nil, usagef("%v", err)
	}
	o.cassettes = fl.Args()
	if _, err := regexp.Compile(o.run); err != nil {
		return nil, usagef("-run: %v", err)
	}
	for _, c := range o.cassettes {
		if _, err := path.Match(strings.TrimSuffix(c, "/..."), ""); err != nil {
			return nil, usagef("cassette pattern %q: %v", c, err)
		}
	}
	switch {
	case o.force && strings.TrimSpace(o.reason) == "":
		return nil, usagef("-force needs -reason 'why the pinned cassettes change'")
	case o.check && (o.force || o.dryRun):
		return nil, usagef("-check records and reviews only; it takes no -force or -dry-run")
	case o.recover && (o.dryRun || o.check || o.force || len(o.cassettes) > 0):
		return nil, usagef("-recover takes only -dir")
	case o.dir != "" && !o.recover:
		return nil, usagef("-dir goes with -recover")
	}
	return o, nil
}

// list splits a comma-separated flag value.
func list(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
