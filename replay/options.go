package replay

import (
	"fmt"

	"github.com/codegenie/codegenie/internal/replaylimits"
)

// Options is how this package reads and writes bundles; every operation on
// a bundle on disk is a method of it. Its zero value uses the default
// bounds and replaces nothing.
//
// The bounds limit the memory and work a read of an untrusted bundle may
// cost, whatever the bundle holds. A read that would pass a bound fails
// with a [*LimitError] naming it.
type Options struct {
	// MaxBufferedBlobs bounds the bytes of blobs a read holds in memory
	// at once: in the single-file form every blob (they come before the
	// log), in the directory form every blob read so far (each is read
	// once and shared by the events that refer to it). Diff counts both
	// bundles together. Verify holds none. Zero means
	// 128 MiB.
	MaxBufferedBlobs int64
	// MaxPayloadBytes bounds the total size of the payloads a Reader hands
	// out, counting a shared blob once per event that refers to it: it
	// bounds what a caller does with the events, whatever few bytes they
	// were stored in. Zero means 1 GiB.
	MaxPayloadBytes int64
	// MaxLoadedBytes bounds the memory of the bundles a read holds whole
	// (Load, Diff, Merge): for every event its fixed size, its kind, lane,
	// audit ID and inline payload; for every bundle its metadata, runs and
	// snapshot files, which hold its other strings. Strings repeated on
	// every event count every time, however well they compress. Diff and
	// Merge count all their bundles together; blobs count against
	// MaxBufferedBlobs instead. Zero means 64 MiB.
	MaxLoadedBytes int64

	// Force lets Write and WriteFile replace an existing bundle (either
	// form). Nothing that is not a bundle is ever replaced, with or
	// without Force.
	Force bool
}

func (o Options) maxPayload() int64 {
	if o.MaxPayloadBytes > 0 {
		return o.MaxPayloadBytes
	}
	return replaylimits.MaxPayloadBytes
}

func (o Options) newBudget() *budget {
	b := &budget{limit: o.MaxBufferedBlobs, loadLimit: o.MaxLoadedBytes}
	if b.limit <= 0 {
		b.limit = replaylimits.MaxBufferedBlobs
	}
	if b.loadLimit <= 0 {
		b.loadLimit = replaylimits.MaxLoadedBytes
	}
	return b
}

// budget counts the blob bytes held against Options.MaxBufferedBlobs, and
// the other bytes of bundles held whole against Options.MaxLoadedBytes;
// one budget may be shared by several Readers (Diff, Merge).
type budget struct{ limit, used, loadLimit, loaded int64 }

// load counts n more bytes of a bundle held whole.
func (b *budget) load(n int64) error {
	if b.loaded+n > b.loadLimit {
		return &LimitError{Limit: "MaxLoadedBytes", Value: b.loadLimit,
			What: fmt.Sprintf("the bundles held in memory would total %d bytes", b.loaded+n)}
	}
	b.loaded += n
	return nil
}

func (b *budget) take(n int64) error {
	if b.used+n > b.limit {
		return &LimitError{Limit: "MaxBufferedBlobs", Value: b.limit,
			What: fmt.Sprintf("the blobs to hold in memory would total %d bytes", b.used+n)}
	}
	b.used += n
	return nil
}

// LimitError reports that reading a bundle would pass one of the bounds
// of Options.
type LimitError struct {
	Limit string // the Options field: "MaxBufferedBlobs", "MaxPayloadBytes" or "MaxLoadedBytes"
	Value int64  // its value in this read
	What  string // what passed it
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: %s, more than Options.%s (%d bytes); raise that bound only for a bundle you trust",
		errTooLarge, e.What, e.Limit, e.Value)
}

func (e *LimitError) Unwrap() error { return errTooLarge }
