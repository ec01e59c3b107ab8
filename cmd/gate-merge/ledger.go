package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/ledgerdb"
	"github.com/codegenie/codegenie/ledger"
)

// appendBound bounds opening the ledger, and each append of a verdict. It
// is longer than the bounds of the PostgreSQL store's own waits
// (lock_timeout 30 s by default, see ledger/postgres), whose error names
// the session holding the lock, so that it ends only a wait those do not:
// a database that stopped answering, an embedded ledger's lock never
// released.
const appendBound = 2 * time.Minute

// appendVerdicts appends the verdict of each merged result to the ledger
// at dsn (ledger.Open: a file path, or postgres://...): PASS,
// NONDETERMINISTIC and BROKEN (a skipped scenario and a crashed gate have
// none), each as its outcome with its paths from where the merge ran
// (gate.Result.Resolved), the revision and the CI job, within
// appendBound.
func appendVerdicts(ctx context.Context, dsn string, rs []gate.Result, getenv func(string) string) error {
	return appendWithin(ctx, dsn, rs, getenv, appendBound)
}

// appendWithin is appendVerdicts within bound: opening the ledger, or an
// append, that has not finished by then fails, saying so, and the
// verdicts after it are not appended, rather than each waiting as long.
func appendWithin(ctx context.Context, dsn string, rs []gate.Result, getenv func(string) string, bound time.Duration) error {
	octx, cancel := context.WithTimeout(ctx, bound)
	st, err := ledger.Open(octx, dsn)
	timedOut := ctx.Err() == nil && errors.Is(octx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil {
		if timedOut {
			return fmt.Errorf("-ledger: opening %s did not finish within %v, so no verdict is in the ledger: %w", ledgerdb.RedactDSN(dsn), bound, err)
		}
		return fmt.Errorf("-ledger: %w", err)
	}
	var errs []error
	for i, r := range rs {
		if !hasVerdict(r) {
			continue
		}
		e := ledger.Entry{Outcome: r.Resolved(), Revision: ledgerdb.Revision(getenv), CIJob: ledgerdb.CIJob(getenv)}
		actx, cancel := context.WithTimeout(ctx, bound)
		_, err := st.Append(actx, e)
		timedOut := ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err != nil && timedOut {
			errs = append(errs, fmt.Errorf("-ledger: the append of scenario %s to %s did not finish within %v, so its verdict is not in the ledger, nor the %d after it: another appender holds the ledger's lock, or the database stopped answering: %w",
				excerpt.Quote(r.Scenario), ledgerdb.RedactDSN(dsn), bound, len(slices.DeleteFunc(slices.Clone(rs[i+1:]), func(r gate.Result) bool { return !hasVerdict(r) })), err))
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("-ledger: append %s: %w", excerpt.Quote(r.Scenario), err))
		}
	}
	if err := st.Close(); err != nil {
		errs = append(errs, fmt.Errorf("-ledger: %w", err))
	}
	return errors.Join(errs...)
}

// hasVerdict reports whether r has a verdict a ledger records.
func hasVerdict(r gate.Result) bool {
	return r.Verdict == gate.Pass || r.Verdict == gate.Nondeterministic || r.Verdict == gate.Broken
}
