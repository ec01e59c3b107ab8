// Package prompttest provides prompt inputs for the tests of the packages
// that build and read prompts (prompt, internal/promptparse): a small and a
// realistic fixed input, and rapid generators whose strings attack the
// format with fences, headings, quotes, control bytes and invalid UTF-8.
//
// It is test support only: nothing outside tests imports it, and it makes
// no claim about which inputs the pipeline sends.
package prompttest
