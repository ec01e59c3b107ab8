package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/codegenie/codegenie/internal/ciinfo"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/ledger"
)

// appendToLedger appends rep's verdict to the ledger at dsn (ledger.Open:
// a file path for the embedded store, postgres://... for PostgreSQL). A
// skipped scenario is not a verdict and is not appended. harness links no
// database driver: a postgres:// DSN needs the user's test package to
// import github.com/codegenie/codegenie/ledger/postgres, and ledger.Open's
// error says so.
func appendToLedger(ctx context.Context, dsn string, rep *Report) error {
	if rep.Verdict == Skipped || rep.Verdict == "" {
		return nil
	}
	st, err := ledger.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("harness: -gate.ledger: %w", err)
	}
	//detvet:ignore a ledger entry records the CI environment by design
	_, err = st.Append(ctx, ledgerEntry(rep, os.Getenv))
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("harness: -gate.ledger: append %s: %w", rep.Scenario, err)
	}
	return nil
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
// the package directory (relative to the module root) that re-run it. The
// ledger compares these when it replays the entry; the code revision and
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
// the root), or "" when dir is not in a module.
func moduleDir(dir string) string {
	root, err := hint.RootOf(dir)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return ""
	}
	return filepath.ToSlash(rel)
}
