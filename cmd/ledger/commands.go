package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/codegenie/codegenie/internal/ledgerdb"
	"github.com/codegenie/codegenie/ledger"
	"github.com/codegenie/codegenie/ledger/postgres"
)

// flags is a subcommand's flag set with the shared -ledger flag.
type flags struct {
	*flag.FlagSet
	dsn *string
}

func (a app) flags(name string) flags {
	fs := flag.NewFlagSet("ledger "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return flags{fs, fs.String("ledger", a.getenv("CODEGENIE_LEDGER"), "the ledger: a file path or a postgres:// URL (default $CODEGENIE_LEDGER)")}
}

// parse parses args, which take no positional arguments.
func (f flags) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpRequested{f.FlagSet}
		}
		return usagef("%s: %v", f.Name(), err)
	}
	if f.NArg() > 0 {
		return usagef("%s: unexpected argument %q", f.Name(), f.Arg(0))
	}
	if *f.dsn == "" {
		return usagef("%s: no ledger: give -ledger DSN or set CODEGENIE_LEDGER", f.Name())
	}
	return nil
}

// helpRequested is -h: the subcommand's flags are described on standard
// output.
type helpRequested struct{ fs *flag.FlagSet }

func (h *helpRequested) Error() string { return "help requested" }

// write describes every flag of the subcommand (flag.PrintDefaults).
func (h *helpRequested) write(w io.Writer) {
	fmt.Fprintf(w, "flags of %s:\n", h.fs.Name())
	// The default of -ledger is $CODEGENIE_LEDGER, which may hold a
	// password: the usage names the variable, never its value.
	h.fs.Lookup("ledger").DefValue = ""
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
}

func (a app) open(ctx context.Context, f flags) (*ledger.Store, error) {
	return ledger.Config{Now: a.now}.Open(ctx, *f.dsn)
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func (a app) verify(ctx context.Context, args []string, stdout, _ io.Writer) error {
	f := a.flags("verify")
	asJSON := f.Bool("json", false, "print the report as JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	s, err := a.open(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		err = writeJSON(stdout, rep)
	} else {
		err = rep.Text(stdout)
	}
	if err != nil {
		return err
	}
	return rep.Err()
}

func (a app) flakes(ctx context.Context, args []string, stdout, _ io.Writer) error {
	f := a.flags("flakes")
	since := f.Uint64("since", 0, "count only entries with seq >= N")
	asJSON := f.Bool("json", false, "print JSON")
	if err := f.parse(args); err != nil {
		return err
	}
	s, err := a.open(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.Flakes(ctx, *since)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	return rep.Text(stdout)
}

// retain drops old entries; it refuses a ledger that does not verify, so
// that retention never destroys the evidence of tampering.
func (a app) retain(ctx context.Context, args []string, stdout, _ io.Writer) error {
	f := a.flags("retain")
	before := f.Uint64("before", 0, "drop the entries with seq < N")
	reason := f.String("reason", "", "why, recorded in the ledger (required)")
	if err := f.parse(args); err != nil {
		return err
	}
	if *before == 0 || *reason == "" {
		return usagef("retain: give -before N and -reason TEXT")
	}
	s, err := a.open(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil {
		return err
	}
	if err := rep.Err(); err != nil {
		rep.Text(stdout)
		return fmt.Errorf("retain refused: %w", err)
	}
	e, err := s.Retain(ctx, *before, *reason)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "dropped entries %d..%d; recorded as admin entry %d\n", e.Admin.DroppedFrom, e.Admin.DroppedTo, e.Seq)
	return err
}

// repair makes an embedded ledger appendable after a killed append tore
// its last line.
func (a app) repair(ctx context.Context, args []string, stdout, _ io.Writer) error {
	f := a.flags("repair")
	if err := f.parse(args); err != nil {
		return err
	}
	if strings.Contains(*f.dsn, "://") {
		return usagef("repair: only the embedded store can have a torn line; give its file path")
	}
	rep, err := ledger.Config{Now: a.now}.Repair(ctx, *f.dsn)
	if err != nil {
		return err
	}
	return rep.Text(stdout)
}

func (a app) install(ctx context.Context, args []string, stdout, _ io.Writer) error {
	f := a.flags("install")
	if err := f.parse(args); err != nil {
		return err
	}
	if !ledgerdb.IsPostgres(*f.dsn) {
		return usagef("install: the embedded store needs no install; give a postgres:// URL of a role that may create tables and roles")
	}
	if err := postgres.Install(ctx, *f.dsn); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "installed %s; grant %s to the role CI appends as, %s to the role that runs retention\n",
		postgres.Table, postgres.AppRole, postgres.AdminRole)
	return err
}
