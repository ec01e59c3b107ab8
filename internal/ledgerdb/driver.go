package ledgerdb

import (
	"context"
	"sync"
	"time"
)

// Row is one sealed ledger entry as a Backend stores it: its canonical
// bytes and the columns kept beside them. Scan fills Seq, Prev, Hash and
// Body; Kind, Scenario and RecordedAt are set only on the way in.
type Row struct {
	Seq        uint64
	Prev, Hash string
	Kind       string
	Scenario   string
	RecordedAt time.Time
	Body       []byte
}

// Backend is a ledger store other than the embedded one, as its driver
// package implements it: rows under a lock. The ledger package seals
// every entry and checks every retention; a Backend only stores what it
// is given, atomically, and returns it in seq order.
type Backend interface {
	// Append calls seal with the head's seq and hash (0 and "" when the
	// store is empty) while holding the store's append lock, and stores
	// the row seal returns as the new head, in one transaction. It
	// returns seal's error as it is.
	Append(ctx context.Context, seal func(headSeq uint64, headHash string) (Row, error)) error
	// Scan calls fn with each stored row whose seq is in [from, to] (to 0:
	// up to the head), in seq order, its body cut to MaxEntryBytes+1
	// bytes. It stops at fn's first error and returns it.
	Scan(ctx context.Context, from, to uint64, fn func(Row) error) error
	// Retain calls seal, under the append lock, with the first seq, the
	// head's seq and hash, and the hash of entry before-1 ("" when there
	// is none); then deletes the entries before before and stores the
	// admin row seal returns, in one transaction.
	Retain(ctx context.Context, before uint64, seal func(first, headSeq uint64, headHash, boundary string) (Row, error)) error
	// Close releases the handle.
	Close() error
}

// OpenFunc opens the Backend a DSN names.
type OpenFunc = func(ctx context.Context, dsn string) (Backend, error)

var drivers struct {
	sync.RWMutex
	m map[string]OpenFunc
}

// Register makes ledger.Open hand DSNs of the URL scheme (without "://")
// to open. A driver package calls it from init, so a program links a
// database driver only by importing that package, as database/sql drivers
// are linked. Registering a scheme twice panics.
func Register(scheme string, open OpenFunc) {
	drivers.Lock()
	defer drivers.Unlock()
	if _, dup := drivers.m[scheme]; dup {
		panic("ledger: Register called twice for scheme " + scheme)
	}
	if drivers.m == nil {
		drivers.m = map[string]OpenFunc{}
	}
	drivers.m[scheme] = open
}

// Driver returns the open function registered for scheme, nil when none
// is.
func Driver(scheme string) OpenFunc {
	drivers.RLock()
	defer drivers.RUnlock()
	return drivers.m[scheme]
}

// SetDriversForTest replaces the registry with m and returns the one it
// replaced.
func SetDriversForTest(m map[string]OpenFunc) map[string]OpenFunc {
	drivers.Lock()
	defer drivers.Unlock()
	saved := drivers.m
	drivers.m = m
	return saved
}
