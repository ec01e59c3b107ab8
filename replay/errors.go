package replay

import (
	"errors"
	"fmt"
)

// Sentinel conditions. Every error returned by this package for a bad bundle
// is a *BundleError wrapping one of these (test with errors.Is).
var (
	// ErrVersion: the bundle is of another version of the format.
	ErrVersion = errors.New("unsupported bundle format version")
	// ErrDigest: a file, blob or payload does not match its recorded digest.
	ErrDigest = errors.New("digest mismatch")
	// ErrChain: a record's chain hash, or the chain head, does not match.
	ErrChain = errors.New("hash chain broken")
	// ErrOrder: seq, lane or parent ordering is violated.
	ErrOrder = errors.New("events out of order")
	// ErrRequired: a required field is missing or invalid.
	ErrRequired = errors.New("required field missing")
	// ErrTruncated: a file ends early.
	ErrTruncated = errors.New("truncated")
	// ErrTooLarge: a size bound is exceeded (see the Max constants).
	ErrTooLarge = errors.New("size bound exceeded")
	// ErrUnsafeName: a file name is not one the format allows (path
	// traversal, a non-hex blob name, a link, a directory where a file
	// belongs).
	ErrUnsafeName = errors.New("unsafe or unknown file name")
	// ErrMissing: a file the manifest, a run or an event refers to is
	// absent, or a run that is asked for.
	ErrMissing = errors.New("missing file")
	// ErrMalformed: a file cannot be parsed.
	ErrMalformed = errors.New("malformed")
	// ErrExists: a write found something at its output path that it may
	// not replace: anything that is not a bundle, or a bundle without
	// WriteOptions.Force.
	ErrExists = errors.New("output exists")
	// ErrConflict: Merge found two records with the same identity and
	// different bytes (see Merge), or bundles of different scenarios.
	ErrConflict = errors.New("conflicting events")
)

// BundleError locates a problem in a bundle: the bundle Path, the File
// inside it ("events.log", "blobs/<hex>", ...; "" for the bundle itself),
// the 0-based Record index in events.log over all runs (-1 when the
// problem is not in a record), the operation and the underlying error.
type BundleError struct {
	Path   string // the bundle (directory or single file)
	File   string // file inside the bundle, "" for the bundle itself
	Record int    // 0-based record index in events.log, -1 if none
	Op     string // "open", "verify", "read", "write", "merge", ...
	Err    error
}

func (e *BundleError) Error() string {
	s := "replay: " + e.Op + " " + e.Path
	if e.File != "" {
		s += ": " + e.File
	}
	if e.Record >= 0 {
		s += fmt.Sprintf(": record %d", e.Record)
	}
	return s + ": " + e.Err.Error()
}

func (e *BundleError) Unwrap() error { return e.Err }

// wrapf builds an error wrapping the sentinel with a message.
func wrapf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}
