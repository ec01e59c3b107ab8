package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The bounds of an append's (and a retention's) wait, set on its own
// transaction with SET LOCAL (set_config(name, value, true)) before it
// takes the append lock. A DSN sets another value with the parameter of
// the same name, in PostgreSQL's units (postgres://ci@db/ledger?lock_timeout=5s;
// 0 turns a bound off), which the server also applies to the session.
var waitDefaults = [...]struct{ name, value string }{
	// lock_timeout bounds the wait for the append lock (and any other
	// lock): a session holding it in an open transaction fails the
	// append after this long, naming that session, instead of blocking
	// every append.
	{"lock_timeout", "30s"},
	// statement_timeout bounds any one statement, the wait for the lock
	// included; longer than lock_timeout so that the lock's error, which
	// names its holder, comes first.
	{"statement_timeout", "60s"},
	// idle_in_transaction_session_timeout ends the appender's own
	// session when it stops inside its transaction (a paused CI job, a
	// lost network) for this long, which releases the lock; shorter than
	// lock_timeout so that the appenders waiting behind it get the lock.
	{"idle_in_transaction_session_timeout", "10s"},
}

// waitBounds are the values of waitDefaults' settings for one store.
type waitBounds [len(waitDefaults)]string

// waitBoundsOf returns the defaults, replaced by the values the DSN's
// runtime parameters give.
func waitBoundsOf(params map[string]string) waitBounds {
	var w waitBounds
	for i, d := range waitDefaults {
		w[i] = d.value
		if v, ok := params[d.name]; ok {
			w[i] = v
		}
	}
	return w
}

// setSQL sets the bounds on the transaction it runs in.
const setSQL = "SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $2, true), set_config('idle_in_transaction_session_timeout', $3, true)"

func (w waitBounds) set(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, setSQL, w[0], w[1], w[2])
	return err
}

// holdersSQL lists the sessions holding the append lock: pg_locks names
// a bigint advisory key by its high 32 bits (classid), its low 32 bits
// (objid) and objsubid 1. pg_stat_activity shows another role's state
// only to members of pg_read_all_stats.
const holdersSQL = `SELECT l.pid, coalesce(a.state, ''), coalesce(a.usename::text, ''), coalesce(a.application_name, '')
FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	AND l.classid::bigint = $1 AND l.objid::bigint = $2
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY l.pid`

// lookupBound bounds the query that names the holders after a wait failed.
const lookupBound = 5 * time.Second

// waitError returns err, from waiting for the append lock, with the
// sessions that hold it: their pid, state, role and application, read
// on another connection of the pool.
func (s *store) waitError(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	timedOut := errors.As(err, &pgErr) && (pgErr.Code == "55P03" || pgErr.Code == "57014")
	if !timedOut && ctx.Err() == nil {
		return err
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupBound)
	defer cancel()
	rows, qerr := s.pool.Query(lctx, holdersSQL, appendLock>>32, appendLock&0xffffffff)
	var held, pids []string
	if qerr == nil {
		for rows.Next() {
			var pid int32
			var state, user, app string
			if qerr = rows.Scan(&pid, &state, &user, &app); qerr != nil {
				break
			}
			if state == "" {
				state = "state not visible to this role (pg_read_all_stats shows it)"
			}
			pids = append(pids, fmt.Sprintf("pg_terminate_backend(%d)", pid))
			h := fmt.Sprintf("backend pid %d (%s, role %q", pid, state, user)
			if app != "" {
				h += fmt.Sprintf(", application %q", app)
			}
			held = append(held, h+")")
		}
		rows.Close()
		if qerr == nil {
			qerr = rows.Err()
		}
	}
	what := fmt.Sprintf("the append lock was not free within the wait (lock_timeout %s, statement_timeout %s)", s.wait[0], s.wait[1])
	switch {
	case qerr != nil:
		return fmt.Errorf("%s; who holds it could not be read (%v): %w", what, qerr, err)
	case len(held) == 0:
		return fmt.Errorf("%s; no session holds it now, so try again: %w", what, err)
	}
	return fmt.Errorf("%s: it is held by %s, in an open transaction that blocks every append: end it (SELECT %s, as its role or a superuser) or wait for it; a DSN parameter sets the wait (?lock_timeout=30s): %w",
		what, strings.Join(held, ", "), strings.Join(pids, ", "), err)
}

// endedError explains err when the server ended the appender's own
// session because it stopped inside its transaction.
func (s *store) endedError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "25P03" {
		return fmt.Errorf("the append stopped inside its transaction for longer than idle_in_transaction_session_timeout %s, so the server ended its session and released the lock; nothing was appended: %w", s.wait[2], err)
	}
	return err
}
