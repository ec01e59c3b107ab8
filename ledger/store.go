package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// Store is an open append-only ledger, embedded or behind a registered
// driver. Both kinds satisfy the same contract, which one conformance
// suite checks: Append is atomic and serialised across goroutines, handles
// and processes (and, for PostgreSQL, machines), so the sequence is
// gapless and the chain never forks.
type Store struct {
	s store
}

// store is what each kind of store implements: the methods of Store of
// the same names.
type store interface {
	Append(ctx context.Context, e Entry) (Entry, error)
	Scan(ctx context.Context, from, to uint64, fn func(Record) error) error
	Retain(ctx context.Context, before uint64, reason string) (Entry, error)
	Close() error
}

// Record is one entry as a store holds it, before any check: Verify works
// on records so that a damaged entry is still reported at its place.
type Record struct {
	// Seq is the seq the store files the record under (the Postgres seq
	// column), or the seq read from the entry (the embedded store; 0 when
	// it cannot be read).
	Seq uint64
	// Line is the record's 1-based line in the embedded store's file; 0
	// for PostgreSQL.
	Line int64
	// Body is the entry's stored canonical bytes.
	Body []byte
	// Hash and Prev are the Postgres columns kept beside the body; empty
	// for the embedded store.
	Hash, Prev string
}

// retention is what Retain was asked: drop the entries with seq < Before,
// recording Reason.
type retention struct {
	Before uint64
	Reason string
}

// Config configures Open. The zero value is usable.
type Config struct {
	// Now is the clock Append reads RecordedAt from; nil means time.Now.
	Now func() time.Time
}

// Errors of stores.
var (
	// errBadRetention: a retention that drops nothing, drops the head, or
	// gives no reason.
	errBadRetention = errors.New("ledger: bad retention")
	// errDamaged: a store holds a record that cannot be read as an entry.
	errDamaged = errors.New("ledger: damaged record")
)

// Append seals e (Seq, Prev, RecordedAt, Hash; Kind "verdict" when empty)
// as the entry after the current head, stores it durably and returns it
// as stored.
func (s *Store) Append(ctx context.Context, e Entry) (Entry, error) { return s.s.Append(ctx, e) }

// Scan calls fn with each stored record whose seq is in [from, to] (to 0:
// up to the head), in seq order, before any check (see [Store.Entries]).
// It stops at fn's first error and returns it.
func (s *Store) Scan(ctx context.Context, from, to uint64, fn func(Record) error) error {
	return s.s.Scan(ctx, from, to, fn)
}

// Retain drops the entries with seq < before and appends the admin entry
// that records it with reason (required), in one act. It is the only way
// anything is deleted.
func (s *Store) Retain(ctx context.Context, before uint64, reason string) (Entry, error) {
	return s.s.Retain(ctx, before, reason)
}

// Close releases the handle.
func (s *Store) Close() error { return s.s.Close() }

// Open opens the ledger named by dsn with the zero Config.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return Config{}.Open(ctx, dsn)
}

// Open opens the ledger named by dsn: a URL (scheme://...) opens the
// store whose driver registered that scheme (postgres:// and
// postgresql:// once the program imports ledger/postgres, see Register);
// anything else is the path of an embedded store file, created on first
// append.
func (c Config) Open(ctx context.Context, dsn string) (*Store, error) {
	var s store
	var err error
	switch {
	case dsn == "":
		return nil, fmt.Errorf("%w: empty; give a file path or a postgres:// URL", ledgerdb.ErrBadDSN)
	case strings.Contains(dsn, "://"):
		s, err = openDriver(ctx, dsn, c.now())
	default:
		s, err = openFile(dsn, c.now())
	}
	if err != nil {
		return nil, err
	}
	return &Store{s: s}, nil
}

func (c Config) now() func() time.Time {
	if c.Now != nil {
		return c.Now
	}
	//detvet:ignore the default of Config.Now, which a caller injects
	return time.Now
}

// Entries calls fn with each entry whose seq is in [from, to] (to 0: up to
// the head), decoded and checked against its schema; the test, package and
// evidence of an entry of any schema are checked too, since commands turn
// them into arguments. A record that cannot be read or fails a check
// stops the scan with an error wrapping errDamaged that names its seq or
// line; [Store.Verify] says more.
func (s *Store) Entries(ctx context.Context, from, to uint64, fn func(Entry) error) error {
	return s.Scan(ctx, from, to, func(r Record) error {
		e, unknown, err := decodeEntry(r.Body)
		switch {
		case err == nil && unknown:
			err = checkNames(e)
		case err == nil:
			err = checkFields(e)
		}
		if err != nil {
			return fmt.Errorf("%w at %s: %v; run ledger verify", errDamaged, r.where(), err)
		}
		return fn(e)
	})
}

func (r Record) where() string {
	if r.Line > 0 {
		return fmt.Sprintf("line %d (seq %d)", r.Line, r.Seq)
	}
	return fmt.Sprintf("seq %d", r.Seq)
}
