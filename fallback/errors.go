package fallback

import (
	"errors"
	"fmt"
	"strings"

	excerptpkg "github.com/codegenie/codegenie/internal/excerpt"
)

// MaxExcerpt bounds UnusableCompletionError.Excerpt and the excerpt a
// transform.failed event carries, in bytes.
const MaxExcerpt = 512

// Sentinel errors. Test with errors.Is; the typed errors below wrap them.
var (
	// ErrUnusableCompletion: the model answered, but the answer gives no
	// usable change to the repo (no diff, a malformed or garbage diff, a
	// diff that does not apply, a diff touching files not in the repo, or a
	// diff that changes nothing). Always carried by *UnusableCompletionError.
	ErrUnusableCompletion = errors.New("unusable completion")
	// ErrInvalidRepo: a repo path cannot be part of a git snapshot.
	ErrInvalidRepo = errors.New("invalid repo")
	// ErrInvalidConfig: the Tier's configuration cannot run (no adapter,
	// negative K, thresholds out of range).
	ErrInvalidConfig = errors.New("invalid tier config")
	// ErrPanic: a dependency (embedder, retriever, adapter, diff library)
	// panicked; Run recovered it. Carried by *PanicError.
	ErrPanic = errors.New("dependency panicked")
)

// Reasons an answer is unusable, as UnusableCompletionError.Reason and the
// "reason" field of a transform.failed payload.
const (
	ReasonNoDiff        = "no-diff"        // the answer holds no diff block, or an empty one
	ReasonMalformed     = "malformed"      // the answer or its diff cannot be parsed
	ReasonUnknownFile   = "unknown-file"   // the diff touches a file that is not in the repo
	ReasonUnsupported   = "unsupported"    // creation, deletion, rename, copy, mode or binary change
	ReasonDoesNotApply  = "does-not-apply" // a hunk does not match the snapshot
	ReasonEmptyChange   = "empty-change"   // the diff applies but changes nothing
	ReasonNotCanonical  = "not-canonical"  // the regenerated diff could not be produced
	ReasonEmptyResponse = "empty-response" // the adapter returned no text
)

// UnusableCompletionError is the error for an answer that gives no usable
// change. Excerpt is at most MaxExcerpt bytes of the offending text (the
// answer, or the part of the diff that failed), cut on a UTF-8 boundary.
type UnusableCompletionError struct {
	Reason  string // one of the Reason constants
	Path    string // the file concerned, when there is one
	Detail  string // what went wrong, from the parser or applier
	Excerpt string // bounded excerpt of the answer
}

func (e *UnusableCompletionError) Error() string {
	var b strings.Builder
	b.WriteString("fallback: unusable completion (")
	b.WriteString(e.Reason)
	b.WriteString(")")
	if e.Path != "" {
		fmt.Fprintf(&b, " in %q", e.Path)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	b.WriteString("; the answer must hold one ```diff block that applies to the repo snapshot as given (see the system prompt)")
	return b.String()
}

// Unwrap returns ErrUnusableCompletion.
func (e *UnusableCompletionError) Unwrap() error { return ErrUnusableCompletion }

// RunError reports the step of a run that failed. Step is the kind of the
// event the step would have emitted (e.g. "retrieval.ranked",
// "prompt.built"), or "validate" for inputs rejected before any work.
type RunError struct {
	Step string
	Err  error
}

func (e *RunError) Error() string { return "fallback: " + e.Step + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *RunError) Unwrap() error { return e.Err }

// PanicError is a panic recovered from a dependency. Value is the panic
// value formatted with %v; the stack is deliberately not kept, so the
// error text stays deterministic.
type PanicError struct {
	Op    string // what Run was calling, e.g. "embed", "complete", "apply diff"
	Value string
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("fallback: %s panicked: %s; this is a bug in the dependency, report it with the run's events", e.Op, e.Value)
}

// Unwrap returns ErrPanic.
func (e *PanicError) Unwrap() error { return ErrPanic }

// excerpt bounds s to MaxExcerpt bytes without splitting a UTF-8 sequence.
func excerpt(s string) string { return excerptpkg.Head(s, MaxExcerpt) }

// catchPanic runs f and turns a panic into a *PanicError.
func catchPanic(op string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Op: op, Value: fmt.Sprint(v)}
		}
	}()
	return f()
}
