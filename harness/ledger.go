package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/codegenie/codegenie/internal/ciinfo"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/ledgerdb"
	"github.com/codegenie/codegenie/ledger"
)

// ledgerAppendBound bounds a gate's append of one verdict, opening the
// ledger included. It is longer than the bounds of the PostgreSQL store's
// own waits (lock_timeout 30 s by default, see ledger/postgres), whose
// error names the session holding the lock, so that it ends only a wait
// those do not: a database that stopped answering, an embedded ledger's
// lock never released.
const ledgerAppendBound = 2 * time.Minute

// appendToLedger appends rep's verdict to the ledger at dsn (ledger.Open:
// a file path for the embedded store, postgres://... for PostgreSQL),
// within ledgerAppendBound. A skipped scenario is not a verdict and is not
// appended. harness links no database driver: a postgres:// DSN needs the
// user's test package to import
// github.com/codegenie/codegenie/ledger/postgres, and ledger.Open's error
// says so.
func appendToLedger(ctx context.Context, dsn string, rep *Report) error {
	return appendWithin(ctx, dsn, rep, ledgerAppendBound)
}

// appendWithin is appendToLedger within bound: an append that has not
// finished by then fails the gate, saying so, rather than waiting on.
func appendWithin(ctx context.Context, dsn string, rep *Report, bound time.Duration) error {
	if rep.Verdict == Skipped || rep.Verdict == "" {
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	err := func() error {
		st, err := ledger.Open(actx, dsn)
		if err != nil {
			return err
		}
		//detvet:ignore a ledger entry records the CI environment by design
		_, err = st.Append(actx, ledgerEntry(rep, os.Getenv))
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		return err
	}()
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("harness: -gate.ledger: the append of scenario %s to %s did not finish within %v, so its verdict is not in the ledger: another appender holds the ledger's lock, or the database stopped answering: %w",
			quoteName(rep.Scenario), ledgerdb.RedactDSN(dsn), bound, err)
	}
	return fmt.Errorf("harness: -gate.ledger: append %s: %w", rep.Scenario, err)
}

// ledgerEntry is rep as a ledger entry: its result's (Result.LedgerEntry),
// with the code revision and the CI job read through getenv.
func ledgerEntry(rep *Report, getenv func(string) string) ledger.Entry {
	e := rep.Result().LedgerEntry()
	e.Revision = ciinfo.Revision(getenv)
	e.CIJob = ciinfo.CIJob(getenv)
	return e
}

// LedgerEntry is what the ledger records of r's outcome: the scenario, the
// run key and its components, the verdict, the runs, the classes and the
// digests of the largest class, the evidence file (from where the reader
// is: relative to the directory Folder is relative to), and the test and
// the package directory (relative to the module root) that rerun it. The
// ledger compares these when it reruns the entry; the code revision and
// the CI job are the caller's to fill in.
func (r Result) LedgerEntry() ledger.Entry {
	e := ledger.Entry{
		Scenario:     r.Scenario,
		Key:          r.Key,
		Components:   r.Pin,
		Verdict:      string(r.Verdict),
		Runs:         r.Runs,
		OutputDigest: r.OutputDigest.String(),
		ChainDigest:  r.ChainDigest.String(),
		Evidence:     r.inFolder(r.Evidence),
		Test:         r.Test,
		Package:      r.Dir,
	}
	for _, c := range r.Classes {
		e.Classes = append(e.Classes, ledger.Class{Runs: c.Size, OutputDigest: c.OutputDigest.String(), ChainDigest: c.ChainDigest.String(), Error: c.ErrorKind})
	}
	return e
}

// moduleDir is dir relative to its module root, with slashes ("." for
// the root), as the ledger and a result file take a package directory
// (hint.CheckPackage); "" outside a module or where the directory is no
// package path, so that the entry records no package rather than one a
// rerun would refuse.
func moduleDir(dir string) string {
	root, err := hint.RootOf(dir)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return ""
	}
	rel = filepath.ToSlash(rel)
	if hint.CheckPackage(rel) != nil {
		return ""
	}
	return rel
}
