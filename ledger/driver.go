package ledger

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// Backend is a store other than the embedded one, as its driver package
// implements it: rows under a lock. The ledger package seals every entry
// and checks every retention; a Backend only stores what it is given,
// atomically, and returns it in seq order.
type Backend interface {
	// Append calls seal with the head's seq and hash (0 and "" when the
	// store is empty) while holding the store's append lock, and stores
	// the entry and canonical bytes seal returns as the new head, in one
	// transaction. It returns seal's error as it is.
	Append(ctx context.Context, seal func(headSeq uint64, headHash string) (Entry, []byte, error)) error
	// Scan is [Store.Scan].
	Scan(ctx context.Context, from, to uint64, fn func(Record) error) error
	// Retain calls seal, under the append lock, with the first seq, the
	// head's seq and hash, and the hash of entry before-1 ("" when there
	// is none); then deletes the entries before before and stores the
	// admin entry seal returns, in one transaction.
	Retain(ctx context.Context, before uint64, seal func(first, headSeq uint64, headHash, boundary string) (Entry, []byte, error)) error
	// Close releases the handle.
	Close() error
}

// openFunc opens the Backend a DSN names.
type openFunc = func(ctx context.Context, dsn string) (Backend, error)

var drivers struct {
	sync.RWMutex
	m map[string]openFunc
}

// Register makes [Open] hand DSNs of the URL scheme (without "://") to
// open, which opens the [Backend] the DSN names. A driver package calls it from init, so a program links a
// database driver only by importing that package, as database/sql drivers
// are linked; github.com/codegenie/codegenie/ledger/postgres registers
// "postgres" and "postgresql". Registering a scheme twice panics.
func Register(scheme string, open func(ctx context.Context, dsn string) (Backend, error)) {
	drivers.Lock()
	defer drivers.Unlock()
	if _, dup := drivers.m[scheme]; dup {
		panic("ledger: Register called twice for scheme " + scheme)
	}
	if drivers.m == nil {
		drivers.m = map[string]openFunc{}
	}
	drivers.m[scheme] = open
}

// postgresImport is the import that links the PostgreSQL driver.
const postgresImport = `import _ "github.com/codegenie/codegenie/ledger/postgres"`

// openDriver opens dsn through the driver registered for its scheme.
func openDriver(ctx context.Context, dsn string, now func() time.Time) (store, error) {
	scheme, _, _ := strings.Cut(dsn, "://")
	drivers.RLock()
	open := drivers.m[scheme]
	drivers.RUnlock()
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

// backendStore is a Backend as a store: it seals and checks, the Backend
// stores.
type backendStore struct {
	b   Backend
	now func() time.Time
}

func (s *backendStore) Append(ctx context.Context, e Entry) (Entry, error) {
	e, err := checkNew(e)
	if err != nil {
		return Entry{}, err
	}
	var sealed Entry
	err = s.b.Append(ctx, func(headSeq uint64, headHash string) (Entry, []byte, error) {
		var b []byte
		var err error
		sealed, b, err = seal(e, headSeq+1, headHash, s.now())
		return sealed, b, err
	})
	if err != nil {
		return Entry{}, err
	}
	return sealed, nil
}

func (s *backendStore) Scan(ctx context.Context, from, to uint64, fn func(Record) error) error {
	return s.b.Scan(ctx, from, to, fn)
}

func (s *backendStore) Retain(ctx context.Context, before uint64, reason string) (Entry, error) {
	r := retention{Before: before, Reason: reason}
	var sealed Entry
	err := s.b.Retain(ctx, r.Before, func(first, headSeq uint64, headHash, boundary string) (Entry, []byte, error) {
		admin, err := retentionEntry(r, first, headSeq, boundary)
		if err != nil {
			return Entry{}, nil, err
		}
		var b []byte
		sealed, b, err = seal(admin, headSeq+1, headHash, s.now())
		return sealed, b, err
	})
	if err != nil {
		return Entry{}, err
	}
	return sealed, nil
}

func (s *backendStore) Close() error { return s.b.Close() }
