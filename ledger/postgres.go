package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgStore is the PostgreSQL store. Appends serialise on a
// transaction-scoped advisory lock; the unique seq and prev columns make a
// fork impossible even without it.
type pgStore struct {
	pool *pgxpool.Pool
	dsn  string // redacted, for messages
	now  func() time.Time
}

func openPostgres(ctx context.Context, dsn string, now func() time.Time) (*pgStore, error) {
	red := RedactDSN(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: cannot parse it as a PostgreSQL URL", ErrBadDSN, red)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ledger: connect to %s: %w", red, err)
	}
	var table *string
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1)::text", PostgresTable).Scan(&table); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ledger: connect to %s: %w", red, err)
	}
	if table == nil {
		pool.Close()
		return nil, fmt.Errorf("ledger: %s has no %s table: install the schema with an owner role (ledger.Install, or the ledger command's install)", red, PostgresTable)
	}
	return &pgStore{pool: pool, dsn: red, now: now}, nil
}

func (s *pgStore) Close() error {
	s.pool.Close()
	return nil
}

// head reads the last entry's seq and hash inside tx.
func head(ctx context.Context, tx pgx.Tx) (uint64, string, error) {
	var seq int64
	var hash string
	err := tx.QueryRow(ctx, "SELECT seq, hash FROM "+PostgresTable+" ORDER BY seq DESC LIMIT 1").Scan(&seq, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", nil
	}
	return uint64(seq), hash, err
}

// locked runs fn in a transaction holding the append lock.
func (s *pgStore) locked(ctx context.Context, fn func(tx pgx.Tx, seq uint64, hash string) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", postgresLock); err != nil {
			return err
		}
		seq, hash, err := head(ctx, tx)
		if err != nil {
			return err
		}
		return fn(tx, seq, hash)
	})
}

func (s *pgStore) Append(ctx context.Context, e Entry) (Entry, error) {
	if err := checkNew(e); err != nil {
		return Entry{}, err
	}
	var sealed Entry
	err := s.locked(ctx, func(tx pgx.Tx, seq uint64, hash string) error {
		var b []byte
		var err error
		sealed, b, err = seal(e, seq+1, hash, s.now())
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO "+PostgresTable+" (seq, prev, hash, kind, scenario, recorded_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			int64(sealed.Seq), sealed.Prev, sealed.Hash, string(sealed.Kind), sealed.Scenario, sealed.RecordedAt, string(b))
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("ledger: append to %s: %w", s.dsn, err)
	}
	return sealed, nil
}

func (s *pgStore) Scan(ctx context.Context, from, to uint64, fn func(Record) error) error {
	// substr bounds what a hostile row can make us hold: a longer body
	// is cut and then reported as too long.
	rows, err := s.pool.Query(ctx, "SELECT seq, prev, hash, substr(body, 1, $3) FROM "+PostgresTable+
		" WHERE seq >= $1 AND ($2 = 0 OR seq <= $2) ORDER BY seq", int64(from), int64(to), MaxEntryBytes+1)
	if err != nil {
		return fmt.Errorf("ledger: read %s: %w", s.dsn, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var r Record
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
// this handle sealed, in the same transaction.
func (s *pgStore) Retain(ctx context.Context, r Retention) (Entry, error) {
	var sealed Entry
	err := s.locked(ctx, func(tx pgx.Tx, headSeq uint64, headHash string) error {
		var first int64
		var boundary string
		if err := tx.QueryRow(ctx, "SELECT coalesce(min(seq), 0) FROM "+PostgresTable).Scan(&first); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, "SELECT hash FROM "+PostgresTable+" WHERE seq = $1", int64(r.Before)-1).Scan(&boundary)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		admin, err := retentionEntry(r, uint64(first), headSeq, boundary)
		if err != nil {
			return err
		}
		var b []byte
		if sealed, b, err = seal(admin, headSeq+1, headHash, s.now()); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "CALL codegenie_ledger_retain($1, $2, $3, $4, $5, $6)",
			int64(r.Before), int64(sealed.Seq), sealed.Prev, sealed.Hash, sealed.RecordedAt, string(b))
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("ledger: retain in %s: %w", s.dsn, err)
	}
	return sealed, nil
}
