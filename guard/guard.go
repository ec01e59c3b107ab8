package guard

import (
	"context"
	"fmt"
)

// The operations this package refuses in replay mode, as they appear in
// ReplayModeError.Op. Callers may use their own names with AssertReplaySafe.
const (
	OpDial      = "network dial"
	OpWallClock = "wall clock read"
	OpRandomID  = "random ID"
)

// ReplayModeError reports an operation attempted in replay mode. It is
// the one error of this package: a caller asks whether an error is one
// with errors.AsType[*ReplayModeError], which also yields the operation.
type ReplayModeError struct {
	// Op names the forbidden operation, e.g. OpDial.
	Op string
	// Detail says what exactly was attempted (for a dial: the network and
	// the host) and may be empty.
	Detail string
}

// Error names the operation and says what to do instead.
func (e *ReplayModeError) Error() string {
	s := "guard: " + e.Op + " is forbidden in replay mode"
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s + hint(e.Op)
}

func hint(op string) string {
	switch op {
	case OpDial:
		return "; a replayed run may only be served by its cassette: the request is not in it, so re-record the cassette (or find why the request differs from the recorded one)"
	case OpWallClock:
		return "; inject the recorded clock (guard.RecordedClock) instead of the wall clock"
	case OpRandomID:
		return "; inject guard.IDSource(runKey) instead of a random ID source"
	}
	return ""
}

type replayKey struct{}

// WithReplay returns a copy of ctx in replay mode.
func WithReplay(ctx context.Context) context.Context {
	return context.WithValue(ctx, replayKey{}, true)
}

// IsReplay reports whether ctx is in replay mode.
func IsReplay(ctx context.Context) bool {
	v, _ := ctx.Value(replayKey{}).(bool)
	return v
}

// AssertReplaySafe returns a *ReplayModeError naming op if ctx is in replay
// mode, and nil otherwise. Call it before an operation that a replayed run
// must not perform.
func AssertReplaySafe(ctx context.Context, op string) error {
	return check(ctx, op, "")
}

func check(ctx context.Context, op, detail string) error {
	if IsReplay(ctx) {
		return &ReplayModeError{Op: op, Detail: detail}
	}
	return nil
}

func errorf(op, format string, args ...any) error {
	return &ReplayModeError{Op: op, Detail: fmt.Sprintf(format, args...)}
}
