package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/pgtest"
	"github.com/codegenie/codegenie/ledger/postgres"
)

// guardBound is how long these tests wait for an append before failing
// it themselves: far above the bounds they set (at most 1 s), so that a
// busy machine does not fail them, and far below go test's -timeout, so
// that an append that waits forever fails the test instead of the binary.
const guardBound = 30 * time.Second

// ledgerResults are the merged results of a gate of scenarios npm and
// pypi, as read from a results folder: two passing verdicts.
func ledgerResults() []gate.Result {
	out, tape := events.Sum([]byte("out")).String(), events.Sum([]byte("tape")).String()
	var rs []gate.Result
	for _, s := range []string{"npm", "pypi"} {
		rs = append(rs, gate.Result{Outcome: gate.Outcome{
			Scenario: s, Test: "TestGate/" + s, Package: "pkg", Verdict: gate.Pass, Runs: 50, Floor: 20, Key: "k",
			Components: map[string]string{"cassette_id": "c1"}, OutputDigest: out, ChainDigest: tape,
			Classes: []gate.Class{{Runs: 50, OutputDigest: out, ChainDigest: tape}},
		}})
	}
	return rs
}

// appendGuarded runs appendWithin, failing the test if it has not
// returned within guardBound; release is called before the test fails,
// so that the append can end and no goroutine outlives the test.
func appendGuarded(t *testing.T, dsn string, bound time.Duration, release func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- appendWithin(context.Background(), dsn, ledgerResults(), noEnv, bound) }()
	select {
	case err := <-done:
		return err
	case <-time.After(guardBound):
		release()
		<-done
		t.Fatalf("the merge's append was still waiting after %v", guardBound)
		return nil
	}
}

// TestLedgerAppendHasADeadline: a merge whose embedded ledger's lock is
// never released fails its append after the bound with an error that
// says what happened and what was not appended, instead of waiting until
// the CI job's timeout; once the lock is free the append succeeds.
func TestLedgerAppendHasADeadline(t *testing.T) {
	t.Parallel()
	dsn := filepath.Join(t.TempDir(), "ledger.jsonl")
	lk := flock.New(dsn + ".lock")
	require.NoError(t, lk.Lock())
	release := func() { lk.Unlock() }
	t.Cleanup(release)

	err := appendGuarded(t, dsn, 300*time.Millisecond, release)
	require.ErrorContains(t, err, "-ledger: the append of scenario npm to "+dsn+" did not finish within 300ms, so its verdict is not in the ledger, nor the 1 after it")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	release()
	require.NoError(t, appendGuarded(t, dsn, 300*time.Millisecond, release))
}

// TestLedgerAppendNamesTheLockHolder: with a PostgreSQL ledger whose
// append lock another session holds in an open transaction, the merge's
// append fails naming that session's pid, whether the store's
// lock_timeout or the merge's own bound ends the wait first.
func TestLedgerAppendNamesTheLockHolder(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	ctx := context.Background()
	require.NoError(t, srv.Exec(ctx, "postgres", "CREATE DATABASE gate"))
	require.NoError(t, postgres.Install(ctx, srv.DSN(pgtest.Superuser, "gate")))
	require.NoError(t, srv.Exec(ctx, "postgres", "CREATE ROLE ci_app LOGIN IN ROLE "+postgres.AppRole))
	dsn := srv.DSN("ci_app", "gate")

	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	release := func() { c.Close(ctx) }
	t.Cleanup(release)
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	// ledger/postgres's append lock: "codegeni" as big-endian bytes.
	_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(0x636f646567656e69))
	require.NoError(t, err)
	var pid int32
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	holder := fmt.Sprintf("held by backend pid %d (idle in transaction", pid)

	t.Run("the store's lock_timeout", func(t *testing.T) {
		err := appendGuarded(t, dsn+"&lock_timeout=300ms", appendBound, release)
		require.ErrorContains(t, err, "-ledger: append npm: ")
		require.ErrorContains(t, err, holder)
	})
	t.Run("the merge's bound", func(t *testing.T) {
		err := appendGuarded(t, dsn+"&lock_timeout=10min", time.Second, release)
		require.ErrorContains(t, err, "did not finish within 1s, so its verdict is not in the ledger")
		require.ErrorContains(t, err, holder)
	})
	release()
	require.NoError(t, appendGuarded(t, dsn, appendBound, release))
}
