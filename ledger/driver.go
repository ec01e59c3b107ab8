package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// postgresImport is the import that links the PostgreSQL driver.
const postgresImport = `import _ "github.com/codegenie/codegenie/ledger/postgres"`

// openDriver opens dsn through the driver registered for its scheme.
func openDriver(ctx context.Context, dsn string, now func() time.Time) (store, error) {
	scheme, _, _ := strings.Cut(dsn, "://")
	open := ledgerdb.Driver(scheme)
	switch {
	case open == nil && ledgerdb.IsPostgres(dsn):
		return nil, fmt.Errorf("%w: %s names PostgreSQL, whose driver is not linked into this program: add %s to a file of the package (for a gated test, beside its TestMain)", ledgerdb.ErrBadDSN, ledgerdb.RedactDSN(dsn), postgresImport)
	case open == nil:
		return nil, fmt.Errorf("%w: no store is registered for the scheme of %q; a plain path opens the embedded store, a postgres:// URL PostgreSQL", ledgerdb.ErrBadDSN, ledgerdb.RedactDSN(dsn))
	}
	b, err := open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &backendStore{b: b, now: now}, nil
}

// backendStore is a driver's ledgerdb.Backend as a store: it seals and
// checks, the Backend stores.
type backendStore struct {
	b   ledgerdb.Backend
	now func() time.Time
}

func (s *backendStore) Append(ctx context.Context, e Entry) (Entry, error) {
	e, err := checkNew(e)
	if err != nil {
		return Entry{}, err
	}
	var sealed Entry
	err = s.b.Append(ctx, func(headSeq uint64, headHash string) (ledgerdb.Row, error) {
		var b []byte
		var err error
		sealed, b, err = seal(e, headSeq+1, headHash, s.now())
		return row(sealed, b), err
	})
	if err != nil {
		return Entry{}, err
	}
	return sealed, nil
}

func (s *backendStore) Scan(ctx context.Context, from, to uint64, fn func(Record) error) error {
	return s.b.Scan(ctx, from, to, func(r ledgerdb.Row) error {
		return fn(Record{Seq: r.Seq, Body: r.Body, Hash: r.Hash, Prev: r.Prev})
	})
}

func (s *backendStore) Retain(ctx context.Context, before uint64, reason string) (Entry, error) {
	r := retention{Before: before, Reason: reason}
	var sealed Entry
	err := s.b.Retain(ctx, r.Before, func(first, headSeq uint64, headHash, boundary string) (ledgerdb.Row, error) {
		admin, err := retentionEntry(r, first, headSeq, boundary)
		if err != nil {
			return ledgerdb.Row{}, err
		}
		var b []byte
		sealed, b, err = seal(admin, headSeq+1, headHash, s.now())
		return row(sealed, b), err
	})
	if err != nil {
		return Entry{}, err
	}
	return sealed, nil
}

func (s *backendStore) Close() error { return s.b.Close() }

// row is a sealed entry and its canonical bytes as a Backend stores them.
func row(e Entry, body []byte) ledgerdb.Row {
	return ledgerdb.Row{Seq: e.Seq, Prev: e.Prev, Hash: e.Hash, Kind: e.Kind, Scenario: e.Scenario, RecordedAt: e.RecordedAt, Body: body}
}
