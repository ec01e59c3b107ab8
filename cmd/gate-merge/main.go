// Command gate-merge merges the result folders of a determinism gate run
// as shards of a CI matrix (go test ... -gate.shard=i/n
// -gate.results=DIR), prints the summary the unsharded gate prints, and
// explains every scenario that did not pass.
//
// Usage:
//
//	gate-merge [-markdown FILE] [-ledger DSN] [-out DIR] DIR...
//
// gate-merge -h describes the command and every flag; docs/ci in the
// repository has complete GitHub Actions and GitLab CI recipes.
//
// Each DIR is a results folder: the *.json result files of one or more
// shards (gate.ReadResults: regular files only, each bounded in size,
// shards, counts, paths and commands validated) and, in its evidence
// folder, the evidence of their failing gates. The merge
// (gate.MergeResults) orders results by scenario and identity, keeps
// identical results once (a retried shard that differs only in wall time
// is the same result), and fails on a scenario with two different results
// or without a result (its shard is missing, or its test process crashed
// first). The gate passes only when every scenario's one result has
// verdict PASS with at least its floor of runs (gate.Result.Err).
//
// After the summary, each scenario that did not pass is explained
// (gate.Result.Explain): the first screen of its report (verdict, what
// differs, cause), or for a gate whose test process died (verdict
// CRASHED) the run in progress and the crash output; the evidence bundle
// inside DIR; and the commands: bundle diff on that bundle, runnable from
// the directory gate-merge ran in (where the artifacts were downloaded),
// and the go test that reproduces it, runnable from the module root.
// With -markdown FILE, and when $GITHUB_STEP_SUMMARY names a file
// (GitHub Actions sets it in every step), the same is written as Markdown,
// a CI job summary (appended to $GITHUB_STEP_SUMMARY). With -ledger DSN
// each merged verdict is appended to the ledger (ledger.Open: a file
// path, or postgres://...) as its outcome (gate.Result.Resolved), with
// the revision and the CI job read from the environment
// (CODEGENIE_REVISION, else the CI's commit variable); a crashed gate has
// no verdict and is not appended. It is how verdicts reach a ledger: a
// test process appends nothing, and one results folder (an unsharded
// gate) merges as well as several. Opening the ledger and each append
// wait at most 2 minutes; an append that waited that long says so, and
// which verdicts it did not append. With -out the merged
// results are written to DIR, one file per scenario, as the unsharded
// gate would write them.
//
// Exit status: 0 when the merge succeeded and every scenario passed; 1
// when a scenario did not pass, the merge failed or an output could not be
// written; 2 for usage errors. Messages go to standard error, prefixed
// "gate-merge:".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/excerpt"
	_ "github.com/codegenie/codegenie/ledger/postgres" // -ledger postgres://...
)

func main() {
	//detvet:ignore main wires the real environment; run takes it injected
	err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// errUsage: a command-line mistake, already reported with the usage:
// exit status 2.
var errUsage = errors.New("usage")

// errFailed: the merged gate did not pass (the summary says which).
var errFailed = errors.New("the gate did not pass")

// help describes the command; the flags follow it.
const help = `usage: gate-merge [-markdown FILE] [-ledger DSN] [-out DIR] DIR...
  merge the results folders DIR, written by the shards of a determinism gate
  (go test ... -gate.shard=i/n -gate.results=DIR), print the gate summary and
  explain each scenario that did not pass (what differs, the cause, the
  evidence inside DIR, the commands to run), and fail unless every scenario has
  one result: PASS with at least its floor of runs. The Markdown job summary
  is also appended to $GITHUB_STEP_SUMMARY when it is set. In your CI's merge
  job, over the shards' downloaded results folders:

	go run github.com/codegenie/codegenie/cmd/gate-merge shard-0 shard-1 shard-2

Exit status: 0 when the gate passed; 1 when it did not or the merge failed;
2 for usage errors.
Flags:
`

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gate-merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "also write the merged result files to `DIR`, one file per scenario")
	md := fs.String("markdown", "", "also write the summary and the explanations as Markdown (a CI job summary) to `FILE`")
	dsn := fs.String("ledger", "", "append each merged verdict to the ledger at `DSN` (a file path or a postgres:// URL); empty: none")
	usage := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprint(w, help)
		fs.PrintDefaults()
	}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout)
		return nil
	}
	if err == nil && fs.NArg() == 0 {
		err = errors.New("no result directories given")
	}
	if err != nil {
		fmt.Fprintf(stderr, "gate-merge: %v\n", err)
		usage(stderr)
		return errUsage
	}
	var all []gate.Result
	for _, dir := range fs.Args() {
		rs, err := gate.ReadResults(dir)
		if err != nil {
			return err
		}
		all = append(all, rs...)
	}
	merged, mergeErr := gate.MergeResults(all)
	var failed []error
	for _, r := range merged {
		if err := r.Err(); err != nil {
			failed = append(failed, err)
		}
	}
	text, mdText, err := render(merged, mergeErr)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		return err
	}
	var errs []error
	if *md != "" {
		if err := os.WriteFile(*md, []byte(mdText), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("-markdown: %w", err))
		}
	}
	if p := getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := appendFile(p, mdText); err != nil {
			errs = append(errs, fmt.Errorf("$GITHUB_STEP_SUMMARY: %w", err))
		}
	}
	if *dsn != "" {
		if err := appendVerdicts(ctx, *dsn, merged, getenv); err != nil {
			errs = append(errs, err)
		}
	}
	if *out != "" && mergeErr == nil {
		for _, r := range merged {
			if _, err := r.Save(*out); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	switch {
	case mergeErr != nil:
		errs = append([]error{mergeErr}, errs...)
	case len(failed) > 0:
		errs = append([]error{fmt.Errorf("%w:\n%w", errFailed, errors.Join(failed...))}, errs...)
	}
	return errors.Join(errs...)
}

// render returns what gate-merge prints and its Markdown: the summary
// (only when the merge succeeded: a summary of an incomplete merge would
// say PASS above a failing exit status), then the explanation of each
// merged result that did not pass, then, in the Markdown, the merge's
// error.
func render(merged []gate.Result, mergeErr error) (text, md string, err error) {
	var tb, mb strings.Builder
	mb.WriteString("## codegenie determinism gate\n\n")
	if mergeErr == nil {
		if err := gate.WriteSummary(&tb, merged); err != nil {
			return "", "", err
		}
		mb.WriteString(excerpt.MarkdownFence(tb.String(), "text"))
	}
	for _, r := range merged {
		if r.OK() {
			continue
		}
		tb.WriteString("\n")
		mb.WriteString("\n")
		if err := r.Explain(&tb); err != nil {
			return "", "", err
		}
		if err := r.ExplainMarkdown(&mb); err != nil {
			return "", "", err
		}
	}
	if mergeErr != nil {
		fmt.Fprintf(&mb, "\nthe merge failed:\n\n%s", excerpt.MarkdownFence(mergeErr.Error(), "text"))
	}
	return tb.String(), mb.String(), nil
}

// appendFile appends s to the file at p, creating it.
func appendFile(p, s string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// exitCode prints err (if any, and not already reported) and returns the
// exit status.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "gate-merge: %v\n", err)
	return 1
}
