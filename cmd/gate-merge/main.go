// Command gate-merge merges the result files of a determinism gate run as
// shards of a CI matrix (go test ... -gate.shard=i/n
// -gate.results=DIR) and prints the summary the unsharded gate prints.
//
// Usage:
//
//	gate-merge [-out DIR] DIR...
//
// gate-merge -h describes the command and every flag.
//
// Each DIR holds the *.json result files of one or more shards
// (harness.ReadResults: regular files only, each bounded in size, shards
// and counts validated). The merge (harness.MergeResults) orders results
// by scenario and identity, keeps identical results once (a retried shard
// that differs only in wall time is the same result), and fails on a
// scenario with two different results or without a result (its shard is
// missing). The gate passes only when every scenario's one result has
// verdict PASS with at least its floor of runs (harness.Result.Err);
// otherwise each failing scenario is named with the field that failed. With -out the merged results are written to DIR, one file per
// scenario, as the unsharded gate would write them.
//
// Exit status: 0 when the merge succeeded and every scenario passed; 1
// when a scenario did not pass or the merge failed; 2 for usage errors.
// Messages go to standard error, prefixed "gate-merge:".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/codegenie/codegenie/harness"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// errUsage: a command-line mistake, already reported with the usage:
// exit status 2.
var errUsage = errors.New("usage")

// errFailed: the merged gate did not pass (the summary says which).
var errFailed = errors.New("the gate did not pass")

// help describes the command; the flags follow it.
const help = `usage: gate-merge [-out DIR] DIR...
  merge the result files (*.json) in each DIR, written by the shards of a
  determinism gate (go test ... -gate.shard=i/n -gate.results=DIR), print the
  gate summary, and fail unless every scenario has one result: PASS with at
  least its floor of runs. In your CI's merge job, over the shards' uploaded
  result folders:

	go run github.com/codegenie/codegenie/cmd/gate-merge shard-0 shard-1 shard-2

Exit status: 0 when the gate passed; 1 when it did not or the merge failed;
2 for usage errors.
Flags:
`

func run(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gate-merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "also write the merged result files to `DIR`, one file per scenario")
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
	var all []harness.Result
	for _, dir := range fs.Args() {
		rs, err := harness.ReadResults(dir)
		if err != nil {
			return err
		}
		all = append(all, rs...)
	}
	merged, err := harness.MergeResults(all)
	if err != nil {
		return err
	}
	if err := harness.WriteSummary(stdout, merged); err != nil {
		return err
	}
	if *out != "" {
		for _, r := range merged {
			if _, err := harness.WriteResult(*out, r); err != nil {
				return err
			}
		}
	}
	var failed []error
	for _, r := range merged {
		if err := r.Err(); err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w:\n%w", errFailed, errors.Join(failed...))
	}
	return nil
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
