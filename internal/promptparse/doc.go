// Package promptparse reads back the User text that prompt.Builder.Build
// writes: Parse recovers the prompt.Input it was built from, in canonical
// form, so that the fake model (internal/fakellm) can answer from the
// repository files and tests can prove that no content breaks the format.
//
// It accepts exactly the texts Build produces and nothing else: after
// reading a text it builds the result again and compares the bytes, so the
// format has one parse and the parser cannot drift from the builder. The
// format is specified in the documentation of package prompt; its fixed
// lines come from internal/promptformat.
//
// It is not a reader of model answers (prompt.ParseAnswer is) and not a
// lenient reader of hand-written prompts: a text that differs from what
// Build writes by one byte is refused, with an *Error naming the line.
package promptparse
