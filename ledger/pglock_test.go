package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// appendLockKey is the advisory lock key PostgreSQL appends serialise on
// (ledger/postgres's appendLock, "codegeni" as big-endian bytes).
const appendLockKey int64 = 0x636f646567656e69

// waitBound bounds how long these tests let an append wait before they
// fail it themselves: above the default bounds an append's wait ends by
// (10 s for a paused appender's session, 30 s for the lock), so that a
// busy machine does not fail them, and far below go test's -timeout, so
// that an append that waits forever fails the test.
const waitBound = 50 * time.Second

// holdLock holds the append lock in an open transaction of a session of
// its own, as a stopped CI job would, until release or the test's end; it
// returns the session's backend pid.
func holdLock(t *testing.T, dsn string) (pid int32, release func()) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	release = func() { c.Close(ctx) }
	t.Cleanup(release)
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", appendLockKey)
	require.NoError(t, err)
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	return pid, release
}

// TestPostgresAppendWaitIsBounded: a session that holds the append lock
// in an open transaction makes an append fail after the DSN's
// lock_timeout, naming the holder's pid and state, instead of blocking
// it; once the session ends, appends go on.
func TestPostgresAppendWaitIsBounded(t *testing.T) {
	t.Parallel()
	b, _ := postgresBackend(t)
	dsn, _ := b.fresh(t)
	s := open(t, dsn+"&lock_timeout=500ms", &clock{})
	fill(t, s, 1)
	pid, release := holdLock(t, dsn)

	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	_, err := s.Append(ctx, verdict("npm", ledger.Pass))
	require.Error(t, err)
	require.NoError(t, ctx.Err(), "the append waited until the test's own bound: %v", err)
	t.Log(err)
	require.ErrorContains(t, err, fmt.Sprintf("held by backend pid %d (idle in transaction, role \"ci_app\"", pid))
	require.ErrorContains(t, err, "lock_timeout 500ms")
	require.ErrorContains(t, err, fmt.Sprintf("SELECT pg_terminate_backend(%d)", pid))

	release()
	fill(t, s, 1)
	require.Equal(t, 2, verifyOK(t, s).Entries)
}

// TestPostgresPausedAppenderIsEnded: an appender that stops inside Append
// while it holds the lock (a paused CI job) has its session ended by the
// server after idle_in_transaction_session_timeout, 10 s by default, which
// releases the lock: the appender waiting behind it (lock_timeout 30 s by
// default) appends, the paused one fails when it resumes, and the chain
// holds. Both use the default bounds: no DSN sets one.
func TestPostgresPausedAppenderIsEnded(t *testing.T) {
	t.Parallel()
	b, _ := postgresBackend(t)
	dsn, _ := b.fresh(t)
	fill(t, open(t, dsn, &clock{}), 1)
	held, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c := &clock{}
	paused, err := ledger.Config{Now: func() time.Time {
		// Now is read while the append holds the lock.
		once.Do(func() {
			close(held)
			<-resume
		})
		return c.Now()
	}}.Open(context.Background(), dsn)
	require.NoError(t, err)
	defer paused.Close()
	pausedErr := make(chan error, 1)
	go func() {
		_, err := paused.Append(context.Background(), verdict("paused", ledger.Pass))
		pausedErr <- err
	}()
	<-held

	s := open(t, dsn, &clock{})
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	e, err := s.Append(ctx, verdict("npm", ledger.Pass))
	close(resume)
	require.NoError(t, err)
	require.Equal(t, uint64(2), e.Seq)
	err = <-pausedErr
	require.ErrorContains(t, err, "the server ended its session and released the lock; nothing was appended")
	t.Log(err)
	entries := all(t, s)
	require.Len(t, entries, 2)
	require.Equal(t, "npm", entries[1].Scenario)
	verifyOK(t, s)
}
