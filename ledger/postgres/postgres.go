package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/codegenie/codegenie/internal/ledgerdb"
)

func init() {
	ledgerdb.Register("postgres", open)
	ledgerdb.Register("postgresql", open)
}

// store is the PostgreSQL ledgerdb.Backend. Appends serialise on a
// transaction-scoped advisory lock; the database itself refuses any row
// that is not the next seq after the head chained to its hash.
type store struct {
	pool    *pgxpool.Pool
	dsn     string     // redacted, for messages
	chained bool       // the chain trigger is installed and enabled
	wait    waitBounds // set on every transaction that takes the append lock
}

func open(ctx context.Context, dsn string) (ledgerdb.Backend, error) {
	red := ledgerdb.RedactDSN(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: cannot parse it as a PostgreSQL URL", ledgerdb.ErrBadDSN, red)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ledger: connect to %s: %w", red, err)
	}
	var table *string
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1)::text", Table).Scan(&table); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ledger: connect to %s: %w", red, err)
	}
	if table == nil {
		pool.Close()
		return nil, fmt.Errorf("ledger: %s has no %s table: install the schema with an owner role (postgres.Install, or the ledger command's install)", red, Table)
	}
	var chained bool
	err = pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = $2 AND tgenabled <> 'D')",
		Table, chainTrigger).Scan(&chained)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("ledger: connect to %s: %w", red, err)
	}
	return &store{pool: pool, dsn: red, chained: chained, wait: waitBoundsOf(cfg.ConnConfig.RuntimeParams)}, nil
}

// chainTrigger is the trigger that refuses a row not chained to the head.
const chainTrigger = "codegenie_ledger_chain"

// errUnchained refuses to write to an install without the chain trigger.
func (s *store) errUnchained() error {
	return fmt.Errorf("ledger: %s has no enabled %s trigger (it was installed by an older version, or the trigger was disabled): "+
		"run ledger install (postgres.Install) as the owner to add it; until then any row the app role inserts could break the chain, so nothing is appended", s.dsn, chainTrigger)
}

func (s *store) Close() error {
	s.pool.Close()
	return nil
}

// head reads the last entry's seq and hash inside tx.
func head(ctx context.Context, tx pgx.Tx) (uint64, string, error) {
	var seq int64
	var hash string
	err := tx.QueryRow(ctx, "SELECT seq, hash FROM "+Table+" ORDER BY seq DESC LIMIT 1").Scan(&seq, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", nil
	}
	return uint64(seq), hash, err
}

// locked runs fn in a transaction holding the append lock, its waits
// bounded (waitDefaults); a wait that ends unfulfilled names the sessions
// holding the lock.
func (s *store) locked(ctx context.Context, fn func(tx pgx.Tx, seq uint64, hash string) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.wait.set(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", appendLock); err != nil {
			return s.waitError(ctx, err)
		}
		seq, hash, err := head(ctx, tx)
		if err != nil {
			return err
		}
		return fn(tx, seq, hash)
	})
}

func (s *store) Append(ctx context.Context, seal func(uint64, string) (ledgerdb.Row, error)) error {
	if !s.chained {
		return s.errUnchained()
	}
	err := s.locked(ctx, func(tx pgx.Tx, seq uint64, hash string) error {
		r, err := seal(seq, hash)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO "+Table+" (seq, prev, hash, kind, scenario, recorded_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			int64(r.Seq), r.Prev, r.Hash, r.Kind, r.Scenario, r.RecordedAt, string(r.Body))
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: append to %s: %w", s.dsn, s.endedError(err))
	}
	return nil
}

func (s *store) Scan(ctx context.Context, from, to uint64, fn func(ledgerdb.Row) error) error {
	// substr bounds what a hostile row can make us hold: a longer body
	// is cut and then reported as too long.
	rows, err := s.pool.Query(ctx, "SELECT seq, prev, hash, substr(body, 1, $3) FROM "+Table+
		" WHERE seq >= $1 AND ($2 = 0 OR seq <= $2) ORDER BY seq", int64(from), int64(to), ledgerdb.MaxEntryBytes+1)
	if err != nil {
		return fmt.Errorf("ledger: read %s: %w", s.dsn, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var r ledgerdb.Row
		var body string
		if err := rows.Scan(&seq, &r.Prev, &r.Hash, &body); err != nil {
			return fmt.Errorf("ledger: read %s: %w", s.dsn, err)
		}
		r.Seq, r.Body = uint64(seq), []byte(body)
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ledger: read %s: %w", s.dsn, err)
	}
	return nil
}

// Retain calls the retention procedure, which only the admin role may run:
// it deletes with the delete trigger disabled and inserts the admin entry
// sealed here, in the same transaction.
func (s *store) Retain(ctx context.Context, before uint64, seal func(first, headSeq uint64, headHash, boundary string) (ledgerdb.Row, error)) error {
	if !s.chained {
		return s.errUnchained()
	}
	err := s.locked(ctx, func(tx pgx.Tx, headSeq uint64, headHash string) error {
		var first int64
		var boundary string
		if err := tx.QueryRow(ctx, "SELECT coalesce(min(seq), 0) FROM "+Table).Scan(&first); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, "SELECT hash FROM "+Table+" WHERE seq = $1", int64(before)-1).Scan(&boundary)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		r, err := seal(uint64(first), headSeq, headHash, boundary)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "CALL codegenie_ledger_retain($1, $2, $3, $4, $5, $6)",
			int64(before), int64(r.Seq), r.Prev, r.Hash, r.RecordedAt, string(r.Body))
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: retain in %s: %w", s.dsn, s.endedError(err))
	}
	return nil
}
