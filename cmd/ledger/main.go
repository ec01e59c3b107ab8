// Command ledger reads and audits the codegenie verdict ledger (package
// github.com/codegenie/codegenie/ledger).
//
// Usage:
//
//	ledger verify [-json]                  check the whole chain and every entry's schema
//	ledger rerun -from N [-to M] [-strict] [-output report.json] [-dir MODULE]
//	                                       rerun each entry's gate now and compare
//	ledger flakes [-since N] [-json]       verdict counts per scenario
//	ledger retain -before N -reason TEXT   drop entries before N, recorded in the ledger
//	ledger repair                          drop the torn last line a killed append left
//	                                       (embedded store), logged beside the ledger
//	ledger install                         create the PostgreSQL schema and roles
//
// Every command takes -ledger DSN (default $CODEGENIE_LEDGER): a file path
// for the embedded store, or a postgres:// URL. Verdicts are appended by
// gate-merge -ledger DSN RESULTS_DIR, never by a test process.
//
// rerun runs each entry's test in the module at -dir (default the current
// directory), as go test PACKAGE -run '^Test$/^sub$' -count=1, and compares
// the outcome with the entry's when its run key is unchanged (verdict,
// output and chain digests); an entry whose key moved is not comparable,
// and the components that moved are named. Each rerun is appended as an
// entry pointing at the one it reran.
//
// Exit status: 0 on success; 1 when the ledger does not verify, a strict
// rerun diverged, or anything fails; 2 for usage errors. Messages go to
// standard error, prefixed "ledger:".
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/codegenie/codegenie/ledger"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

const usage = `ledger reads and keeps the verdict ledger your module's determinism gates'
results are appended to (gate-merge -ledger DSN RESULTS_DIR): verify its
chain, rerun entries with your module's code, count flaky scenarios. From
your module's root:

	go run github.com/codegenie/codegenie/cmd/ledger flakes -ledger .codegenie/ledger.jsonl
	go run github.com/codegenie/codegenie/cmd/ledger rerun -from 1 -ledger .codegenie/ledger.jsonl

usage:
  ledger verify [-json]
  ledger rerun -from N [-to M] [-strict] [-output report.json] [-dir MODULE]
  ledger flakes [-since N] [-json]
  ledger retain -before N -reason TEXT
  ledger repair
  ledger install
every command takes -ledger DSN (default $CODEGENIE_LEDGER): a file path or a postgres:// URL
`

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "ledger: ") {
		msg = "ledger: " + msg
	}
	fmt.Fprintln(stderr, msg)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprint(stderr, usage)
		return 2
	}
	return 1
}

// app is the command with its seams: the environment, the clock, and how
// rerun re-evaluates an entry.
type app struct {
	getenv func(string) string
	now    func() time.Time
	// evaluator returns how rerun re-evaluates an entry of the module in
	// dir (ledger.RerunConfig.Evaluate).
	evaluator func(dir string, stderr io.Writer) evaluateFunc
	// revision returns the current code revision of the module in dir.
	revision func(ctx context.Context, dir string) string
}

// evaluateFunc is ledger.RerunConfig.Evaluate.
type evaluateFunc = func(ctx context.Context, recorded ledger.Entry) (ledger.Entry, error)

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	//detvet:ignore main wires the real environment and clock; app.run takes them injected
	a := app{getenv: os.Getenv, now: time.Now, evaluator: goTestEvaluator, revision: gitRevision}
	return a.run(ctx, args, stdout, stderr)
}

func (a app) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("no command")
	}
	cmds := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"verify": a.verify, "rerun": a.rerun, "flakes": a.flakes, "retain": a.retain, "repair": a.repair, "install": a.install,
	}
	var h *helpRequested
	switch args[0] {
	case "help", "-h", "-help", "--help":
		io.WriteString(stdout, usage)
		for _, name := range []string{"verify", "rerun", "flakes", "retain", "install"} {
			if errors.As(cmds[name](ctx, []string{"-h"}, stdout, stderr), &h) {
				h.write(stdout)
			}
		}
		return nil
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		return usagef("unknown command %q", args[0])
	}
	err := cmd(ctx, args[1:], stdout, stderr)
	if errors.As(err, &h) {
		h.write(stdout)
		return nil
	}
	return err
}
