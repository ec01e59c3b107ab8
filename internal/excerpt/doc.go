// Package excerpt renders bounded, single-line, terminal-safe pieces of
// bytes for failure messages: a window around a differing offset, the
// first differing offset of two byte strings, the head of a long text, and
// a quoting of strings that came from untrusted input (bundles, cassettes)
// so that control characters never reach a terminal raw.
//
// It is not a diff algorithm (see internal/jsondiff for JSON values) and
// it does not mask secrets: callers mask before they excerpt.
package excerpt
