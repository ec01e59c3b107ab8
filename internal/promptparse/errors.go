package promptparse

import (
	"errors"
	"fmt"
)

// ErrMalformed: Parse was given text that prompt.Builder.Build does not
// produce. Every error Parse returns wraps it.
var ErrMalformed = errors.New("malformed prompt")

// Error reports the line of the User text where Parse stopped. Line is
// 1-based; Err wraps ErrMalformed.
type Error struct {
	Line int
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("promptparse: line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
