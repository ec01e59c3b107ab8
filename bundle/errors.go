package bundle

import (
	"errors"
	"fmt"
)

// The conditions of a bad bundle. Every error this package returns for a
// bad bundle is a *BundleError wrapping one of these; the exported ones are
// those a caller acts on (errors.Is): an output path that is taken (write
// elsewhere, or set Config.Force), a merge conflict (the inputs disagree,
// which no input alone shows). Every other condition means the bundle
// does not verify, and the *BundleError names the file and record.
var (
	// errVersion: the bundle is of another version of the format.
	errVersion = errors.New("unsupported bundle format version")
	// errDigest: a file, blob or payload does not match its recorded digest.
	errDigest = errors.New("digest mismatch")
	// errChain: a record's chain hash, or the chain head, does not match.
	errChain = errors.New("hash chain broken")
	// errOrder: seq, lane or parent ordering is violated.
	errOrder = errors.New("events out of order")
	// errRequired: a required field is missing or invalid.
	errRequired = errors.New("required field missing")
	// errTruncated: a file ends early.
	errTruncated = errors.New("truncated")
	// errTooLarge: a size bound is exceeded (see the bounds in format.go and Config).
	errTooLarge = errors.New("size bound exceeded")
	// errUnsafeName: a file name is not one the format allows (path
	// traversal, a non-hex blob name, a link, a directory where a file
	// belongs).
	errUnsafeName = errors.New("unsafe or unknown file name")
	// errMissing: a file the manifest, a run or an event refers to is
	// absent, or a run that is asked for.
	errMissing = errors.New("missing file")
	// errMalformed: a file cannot be parsed.
	errMalformed = errors.New("malformed")
	// ErrExists: a write found something at its output path that it may
	// not replace: anything that is not a bundle, or a bundle without
	// Config.Force.
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
	s := "bundle: " + e.Op + " " + e.Path
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
