// Package excerpt renders pieces of bytes and text for failure messages
// and CI job summaries so that they show as they are, whatever they hold:
// bounded, single-line, terminal-safe excerpts (a window around a
// differing offset, the first differing offset of two byte strings, the
// head of a long text); a quoting of strings that came from untrusted
// input (bundles, cassettes) so that control characters never reach a
// terminal raw; and, for a Markdown job summary (a GitHub Actions step
// summary), code spans and fenced code blocks that hold any text,
// backticks included, without it being read as Markdown or HTML
// ([MarkdownCode], [MarkdownFence]).
//
// It is not a diff algorithm (see internal/jsondiff for JSON values) and
// it does not mask secrets: callers mask before they excerpt.
package excerpt
