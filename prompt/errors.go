package prompt

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them; test with errors.Is.
var (
	// ErrEmptyAdvisory: the advisory has no ID, or neither a Summary nor Details.
	ErrEmptyAdvisory = errors.New("empty advisory")
	// ErrNoFiles: the input shows the model no repository files.
	ErrNoFiles = errors.New("no repository files")
	// ErrFileTooLarge: one file exceeds Limits.MaxFileBytes.
	ErrFileTooLarge = errors.New("file too large")
	// ErrTotalTooLarge: the files together exceed Limits.MaxTotalBytes.
	ErrTotalTooLarge = errors.New("files too large in total")
	// ErrInvalidPath: a file path is empty, absolute, not slash-separated
	// and clean, contains a "." or ".." element, or contains control
	// characters or invalid UTF-8.
	ErrInvalidPath = errors.New("invalid file path")
	// ErrDuplicatePath: two files have the same path.
	ErrDuplicatePath = errors.New("duplicate file path")
	// ErrInvalidScore: an example's Score is NaN, infinite or above MaxScore in magnitude.
	ErrInvalidScore = errors.New("invalid example score")
	// ErrInvalidAttempt: an attempt number is below 1.
	ErrInvalidAttempt = errors.New("invalid attempt number")
	// ErrNoDiff: a model answer holds no diff block, or an empty one.
	ErrNoDiff = errors.New("no diff in answer")
	// ErrMalformedAnswer: a model answer holds several diff blocks, an
	// unterminated block, or a diff block that is not a unified diff.
	ErrMalformedAnswer = errors.New("malformed answer")
)

// InputError reports a bad Input given to Build or Builder.Canonical: which
// field is wrong, the file path when the field belongs to a file, and how to
// fix it. Err wraps one of the sentinel errors.
type InputError struct {
	Field string // e.g. "Advisory.ID", "Files[3].Content", "Examples[1].Score"
	Path  string // the file's path for file fields, else ""
	Err   error  // one of the sentinels, possibly wrapped
	Fix   string // the next action, e.g. "raise Limits.MaxFileBytes or leave the file out"
}

func (e *InputError) Error() string {
	msg := "prompt: " + e.Field
	if e.Path != "" {
		msg += fmt.Sprintf(" (%q)", e.Path)
	}
	msg += ": " + e.Err.Error()
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func (e *InputError) Unwrap() error { return e.Err }

// ParseError reports where ParseAnswer found an answer it cannot accept.
// Line is 1-based, or 0 when the fault is the answer as a whole (no diff
// block). Err wraps ErrNoDiff or ErrMalformedAnswer.
type ParseError struct {
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("prompt: parse answer: line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("prompt: parse answer: %v", e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }
