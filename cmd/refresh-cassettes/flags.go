package main

import (
	"errors"
	"flag"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/llm"
)

// Defaults of the flags that name this repository's layout.
const (
	defaultGoldens   = "properties/testdata/golden"
	defaultGoldenCmd = "go test ./properties/ -run Golden -update"
)

// usageLine is the command's usage; -h adds every flag.
const usageLine = "usage: refresh-cassettes [-run REGEX] [-expired] [-base-url URL] [-dir DIR] [-review DIR] [-prices FILE] [-goldens DIR] [-golden-cmd CMD] [-parity-runs N] [-dry-run | -check | -force -reason TEXT] | -recover [-dir DIR]"

// helpRequested is -h: text is the usage and every flag with its
// description, for standard output.
type helpRequested struct{ text string }

func (h *helpRequested) Error() string { return "help requested" }

// options are the parsed flags.
type options struct {
	runRE      string
	run        *regexp.Regexp
	baseURL    string
	base, def  *url.URL
	dir        string
	dryRun     bool
	force      bool
	reason     string
	recover    bool
	expired    bool
	check      bool
	reviewDir  string
	prices     string
	goldens    string
	goldenCmd  string
	parityRuns int
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fl := flag.NewFlagSet("refresh-cassettes", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&o.runRE, "run", "", "record only cassettes whose scenario/path matches this regexp")
	fl.StringVar(&o.baseURL, "base-url", llm.DefaultAnthropicBaseURL, "API root to record against")
	fl.StringVar(&o.dir, "dir", filepath.Join("cassettes", "testdata"), "cassette directory")
	fl.BoolVar(&o.dryRun, "dry-run", false, "list what would be re-recorded")
	fl.BoolVar(&o.force, "force", false, "allow replacing pinned cassettes (needs -reason)")
	fl.StringVar(&o.reason, "reason", "", "why pinned cassettes change (kept in the manifest history)")
	fl.BoolVar(&o.recover, "recover", false, "finish or discard what a killed refresh left in -dir, and exit")
	fl.BoolVar(&o.expired, "expired", false, "select only the cassettes past their maximum age")
	fl.BoolVar(&o.check, "check", false, "record into a staging folder, print the review, apply nothing")
	fl.StringVar(&o.reviewDir, "review", "", "directory for review.md and review.json (default: a new temporary directory)")
	fl.StringVar(&o.prices, "prices", "", "price table for the review's cost delta (default: the built-in table)")
	fl.StringVar(&o.goldens, "goldens", defaultGoldens, "directory of golden files that pin cassette digests")
	fl.StringVar(&o.goldenCmd, "golden-cmd", defaultGoldenCmd, "the command that refreshes the golden files")
	fl.IntVar(&o.parityRuns, "parity-runs", harness.DefaultFloor, "replays of each staged cassette before apply (at least the gate's floor)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var sb strings.Builder
			sb.WriteString(usageLine + "\nFlags:\n")
			fl.SetOutput(&sb)
			fl.PrintDefaults()
			return nil, &helpRequested{sb.String()}
		}
		return nil, usagef("%v", err)
	}
	if fl.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fl.Args())
	}
	var err error
	if o.run, err = regexp.Compile(o.runRE); err != nil {
		return nil, usagef("-run: %v", err)
	}
	if o.force && strings.TrimSpace(o.reason) == "" {
		return nil, usagef("-force needs -reason 'why the pinned cassettes change'")
	}
	o.base, err = url.Parse(o.baseURL)
	if err != nil || (o.base.Scheme != "http" && o.base.Scheme != "https") || o.base.Host == "" {
		return nil, usagef("-base-url %q is not an absolute http(s) URL", o.baseURL)
	}
	o.def, _ = url.Parse(llm.DefaultAnthropicBaseURL)
	if o.parityRuns < harness.DefaultFloor {
		return nil, usagef("-parity-runs %d is below the gate's floor of %d runs", o.parityRuns, harness.DefaultFloor)
	}
	if o.check && (o.force || o.dryRun || o.recover) {
		return nil, usagef("-check records and reviews only; it takes no -force, -dry-run or -recover")
	}
	return o, nil
}
