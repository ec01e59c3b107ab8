package bundle

import "fmt"

// Config is how this package reads and writes bundles; every operation on
// a bundle on disk is a method of it. Its zero value uses the default
// bounds and replaces nothing.
//
// The bounds limit the memory and work a read of an untrusted bundle may
// cost, whatever the bundle holds. A read that would pass a bound fails
// with a [*LimitError] naming it.
type Config struct {
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

// The bounds of a Config whose bound is zero.
const (
	defaultMaxBufferedBlobs = 128 << 20
	defaultMaxPayloadBytes  = 1 << 30
	defaultMaxLoadedBytes   = 64 << 20
)

// WithDefaults returns c with every bound that is zero (or negative) set
// to its default: the bounds a read with c keeps to. cmd/bundle shows
// them as its flags' defaults.
func (c Config) WithDefaults() Config {
	set := func(v *int64, def int64) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&c.MaxBufferedBlobs, defaultMaxBufferedBlobs)
	set(&c.MaxPayloadBytes, defaultMaxPayloadBytes)
	set(&c.MaxLoadedBytes, defaultMaxLoadedBytes)
	return c
}

func (c Config) maxPayload() int64 { return c.WithDefaults().MaxPayloadBytes }

func (c Config) newBudget() *budget {
	d := c.WithDefaults()
	return &budget{limit: d.MaxBufferedBlobs, loadLimit: d.MaxLoadedBytes}
}

// budget counts the blob bytes held against Config.MaxBufferedBlobs, and
// the other bytes of bundles held whole against Config.MaxLoadedBytes;
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
// of Config.
type LimitError struct {
	Limit string // the Config field: "MaxBufferedBlobs", "MaxPayloadBytes" or "MaxLoadedBytes"
	Value int64  // its value in this read
	What  string // what passed it
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: %s, more than Config.%s (%d bytes); raise that bound only for a bundle you trust",
		errTooLarge, e.What, e.Limit, e.Value)
}

func (e *LimitError) Unwrap() error { return errTooLarge }
