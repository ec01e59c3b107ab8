package cassettes

import (
	"errors"
	"fmt"
	"strconv"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// The conditions of a cassette or a manifest. Every error this package
// returns about one is a *CassetteError wrapping one of these (or an I/O
// error); the exported ones are those a caller acts on with errors.Is.
var (
	// ErrInteractionNotFound: a replayed request has no unused recorded
	// interaction with the same key (the error is a *MissError). It is
	// go-vcr's own sentinel, so errors.Is works for callers that know
	// either package.
	ErrInteractionNotFound = cassette.ErrInteractionNotFound

	// ErrCassetteNotFound: the cassette file does not exist.
	ErrCassetteNotFound = errors.New("cassette not found")

	// errInvalidCassette: the file is not a well-formed go-vcr cassette
	// (invalid or truncated YAML, missing fields).
	errInvalidCassette = errors.New("invalid cassette")

	// errUnsupportedVersion: the cassette's format version is not 2.
	errUnsupportedVersion = errors.New("unsupported cassette format version")

	// errDigestMismatch: the cassette's digest differs from the manifest's.
	errDigestMismatch = errors.New("cassette digest does not match the manifest")

	// errNotInManifest: a manifest exists but does not list the cassette,
	// or lists a cassette file that does not exist.
	errNotInManifest = errors.New("cassette not listed in the manifest")

	// errSecret: the serialized cassette still contains the recording key
	// or something shaped like an API key or bearer token.
	errSecret = errors.New("secret in cassette")

	// ErrUnusedInteractions: the cassette was closed with recorded
	// interactions that were never replayed.
	ErrUnusedInteractions = errors.New("unused recorded interactions")

	// ErrInterruptedApply: a process applying re-recorded cassettes was
	// killed after it had decided to apply them; Recover completes it.
	ErrInterruptedApply = errors.New("interrupted refresh")

	// errClosed: the cassette was used after Close.
	errClosed = errors.New("cassette is closed")
)

// CassetteError locates a failure: the file, the 1-based line when YAML
// gives one (0 otherwise), and the operation ("open", "parse", "verify",
// "replay", "record", "save", "write", "close", "manifest").
type CassetteError struct {
	Path string
	Line int
	Op   string
	Err  error
}

func (e *CassetteError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return fmt.Sprintf("cassettes: %s: %s: %v", loc, e.Op, e.Err)
}

// Unwrap returns the underlying error.
func (e *CassetteError) Unwrap() error { return e.Err }

func newErr(path string, line int, op string, err error) *CassetteError {
	return &CassetteError{Path: path, Line: line, Op: op, Err: err}
}

// detailError carries a sentinel plus human detail: Error prints the detail,
// Unwrap gives the sentinel.
type detailError struct {
	sentinel error
	msg      string
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.sentinel }

func detailf(sentinel error, format string, args ...any) error {
	return &detailError{sentinel: sentinel, msg: fmt.Sprintf(format, args...)}
}
