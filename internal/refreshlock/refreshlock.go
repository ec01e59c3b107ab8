// Package refreshlock holds the refresh lock of a cassette directory for
// the whole of one refresh, from staging to applying, so that what was
// reviewed is what is applied: cmd/refresh-cassettes records several
// cassettes, reviews them and applies them as one.
//
// The lock is package cassettes' own (a file in the folder .refresh.lock
// of the directory; see the cassettes package documentation, Applying
// re-recorded cassettes). Package cassettes installs [Take] when it is
// initialised, so a program that calls Take imports cassettes. While a
// [Lock] is held, cassettes.Apply of cassettes staged in a folder its
// NewStage made runs under it; every other refresh of the directory, in
// this process or another, waits.
package refreshlock

import "context"

// Lock is a cassette directory's refresh lock, held.
type Lock interface {
	// Recover is cassettes.Recover of the directory, under the lock.
	Recover() error
	// NewStage is cassettes.NewStage of the directory, under the lock:
	// cassettes.Apply of cassettes staged there runs under it too.
	NewStage() (string, error)
	// Unlock removes the staging folders made through the lock that were
	// not applied, then releases the lock. It reports the first folder it
	// could not remove.
	Unlock() error
}

// Take takes dir's refresh lock (creating dir if needed), waiting while
// another refresh holds it, for at most a minute or until ctx is done.
// Package cassettes sets it.
var Take func(ctx context.Context, dir string) (Lock, error)
