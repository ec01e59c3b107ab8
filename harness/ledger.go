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
// with the test and the package directory (relative to the module root)
// that re-run it, the code revision and the CI job read through getenv.
func ledgerEntry(rep *Report, getenv func(string) string) ledger.Entry {
	e := rep.Result().LedgerEntry()
	e.Revision = revision(getenv)
	e.CIJob = ciinfo.CIJob(getenv)
	e.Test = rep.Test
	e.Package = relPackageDir(rep.Dir)
	return e
}

// LedgerEntry is what the ledger records of r's outcome: the scenario, the
// run key and its components, the verdict, the runs, the classes and the
// digests of the largest class, and the evidence file. The ledger compares
// these when it replays the entry.
func (r Result) LedgerEntry() ledger.Entry {
	e := ledger.Entry{
		Scenario:     r.Scenario,
		Key:          r.Key,
		Components:   r.Pin,
		Verdict:      string(r.Verdict),
		Runs:         r.Runs,
		OutputDigest: r.OutputDigest.String(),
		ChainDigest:  r.ChainDigest.String(),
		Evidence:     r.Evidence,
	}
	for _, c := range r.Classes {
		e.Classes = append(e.Classes, ledger.Class{Runs: c.Size, OutputDigest: c.OutputDigest.String(), ChainDigest: c.ChainDigest.String(), Error: c.ErrorKind})
	}
	return e
}

// revision is the code revision under test: the binary's VCS stamp, else
// the commit CI systems name in their environment (go test binaries carry
// no VCS stamp).
func revision(getenv func(string) string) string {
	if r := ciinfo.BuildRevision(); r != "" {
		return r
	}
	for _, k := range []string{"CODEGENIE_REVISION", "GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "CIRCLE_SHA1", "GIT_COMMIT"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// relPackageDir is dir relative to its module root ("." for the root), as
// the ledger takes a package (hint.CheckPackage); "" outside a module or
// where the directory is no package path, so that the entry records no
// package rather than one replay would refuse.
func relPackageDir(dir string) string {
	root, err := hint.RootOf(dir)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return ""
	}
	rel = filepath.ToSlash(rel)
	if hint.CheckPackage(rel) != nil {
		return ""
	}
	return rel
}
