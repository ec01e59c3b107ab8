// Package prompt builds the prompt the FallbackTier sends to the model, and
// parses the model's answer.
//
// Build renders an Input (advisory, repository files, ranked solved examples,
// recipe selection, previous attempts) into a Prompt{System, User}. The bytes
// depend only on the Input: files are sorted by path, recipe parameters by
// key, examples by rank, attempts by number; no map order, clock or platform
// detail reaches the text. TemplateVersion names the format and is part of
// the run's pin; it changes whenever the bytes Build produces could change.
//
// The User text has one reading: every free text sits in a fenced block that
// states its byte length, so a reader recovers each file's exact bytes
// whatever they contain, and no content can break the layout. ParseAnswer
// extracts the diff from a model answer; FormatAnswer writes a well-formed
// answer.
//
// The package is not a diff library (it does not check that a diff applies;
// the fallback package does), not an LLM client, and does not choose which
// files or examples to show: the caller does.
//
// # Validation
//
// Build and Builder.Canonical reject, with an *InputError naming the field,
// the file path where there is one, and the fix:
//   - an advisory with a blank ID, or with both Summary and Details blank
//     (ErrEmptyAdvisory);
//   - no files (ErrNoFiles);
//   - a file path that is empty, absolute, unclean (".", ".." or empty
//     elements, trailing slash), or holds control characters or invalid
//     UTF-8 (ErrInvalidPath); two files with one path (ErrDuplicatePath);
//   - a file larger than Limits.MaxFileBytes (ErrFileTooLarge), or files
//     larger than Limits.MaxTotalBytes together (ErrTotalTooLarge). Sizes are
//     raw Content bytes; the defaults are 64 KiB and 256 KiB;
//   - an example Score that is NaN, infinite or beyond ±MaxScore
//     (ErrInvalidScore); an attempt number below 1 (ErrInvalidAttempt).
//
// # Order
//
// Files are rendered sorted by Path (bytewise). Recipe parameters are sorted
// by key. Examples are rendered in rank order: each Score is first rounded
// to ScoreDecimals (4) decimals (math.Round(s*1e4)/1e4, negative zero
// becoming zero); then Score descending, ID ascending, and the remaining
// fields ascending as a final tie-break. Ranking on the rounded score keeps
// the rendered order explicable from the rendered text, so that the input
// read back from a User text builds that text again. Attempts are sorted by Attempt, then the remaining
// fields. Caller order never matters.
//
// # User text
//
// The User text is UTF-8, every line ends in "\n", and it has this shape
// (⟨q⟩ is a Go double-quoted string as strconv.Quote writes it, ⟨block⟩ is a
// fenced block as specified below, N is a decimal count):
//
//	# Task
//	Fix the security advisory below ... (fixed prose line)
//
//	# Advisory
//	- id: ⟨q⟩
//	- ecosystem: ⟨q⟩
//	- package: ⟨q⟩
//	- vulnerable range: ⟨q⟩
//	- fixed version: ⟨q⟩
//
//	## Summary
//	⟨block text⟩
//
//	## Details
//	⟨block text⟩
//
//	# Recipe
//	- recipe: ⟨q⟩
//	- param ⟨q key⟩: ⟨q value⟩          (one per parameter, sorted by key)
//
//	# Repository files (N)
//
//	## File ⟨q path⟩                     (N times, sorted by path)
//	⟨block text⟩
//
//	# Solved examples (N)                 (only when there are examples)
//	Earlier fixes of similar advisories ... (fixed prose line)
//
//	## Example K                          (K = 1..N in rank order)
//	- id: ⟨q⟩
//	- ecosystem: ⟨q⟩
//	- package: ⟨q⟩
//	- score: D.DDDD                       (strconv.FormatFloat(score, 'f', 4, 64))
//	- band: ⟨q⟩
//	### Advisory
//	⟨block text⟩
//	### Fix
//	⟨block diff⟩
//
//	# Previous attempts (N)               (only on the retry path)
//	These attempts ... Do not repeat them ... (fixed prose line)
//
//	## Attempt K                          (K = the attempt number, in order)
//	- recipe: ⟨q⟩
//	- outcome: ⟨q⟩
//	### Error
//	⟨block text⟩
//
//	# Answer
//	Reply with exactly one ```diff fenced block ... (fixed prose line)
//
// Every section ends with an empty line, as shown. Short fields are quoted,
// so newlines or quotes in them cannot break the layout.
//
// # Blocks
//
// Every free text (summaries, details, file contents, example advisories and
// fixes, attempt errors) is a fenced block:
//
//	FENCE LANG " bytes=" N [" noeol"] "\n"
//	BODY                                 (exactly N bytes)
//	["\n"                                 (only when noeol)]
//	FENCE "\n"
//
// FENCE is a run of backticks one longer than the longest run of backticks
// in BODY, and at least three; no line of BODY can therefore close the block
// for a Markdown reader. N is the exact byte length of BODY, so a reader
// never looks for the closing fence inside content: it reads N bytes, then
// the closing fence. "noeol" is present exactly when BODY is non-empty and
// does not end in "\n"; a newline is then added before the closing fence
// and is not part of the content. LANG is "text" (or "diff" for example
// fixes) when the content is valid UTF-8 without NUL bytes; otherwise LANG
// is "base64" and BODY is the content in standard padded base64, in lines of
// 76 characters each ending in "\n", so binary files and invalid UTF-8
// round-trip exactly while the text stays valid UTF-8. Build writes only
// this canonical form (fence length, flag and encoding follow from the
// content), so a User text has exactly one reading.
//
// # Answer format
//
// The System prompt asks for exactly one fenced code block whose info
// string's first word is "diff", holding a git-style unified diff ("--- a/p",
// "+++ b/p") against the files shown. ParseAnswer reads the answer line by
// line: a line starting (in column 0) with three or more backticks and an
// info string without backticks opens a block; a line of at least as many
// backticks, and nothing else but trailing whitespace, closes it. Lines inside
// non-diff blocks are skipped, so a "```diff" inside another block does not
// count; text outside blocks is ignored. Tilde fences and indented fences are
// not recognised. The result is the lines of the diff block, each with "\n".
// Errors: no diff block, or a blank one, wraps ErrNoDiff; a second diff
// block, any unclosed block, or a diff block with neither a "diff --git" line
// nor a "--- " line followed by a "+++ " line wraps ErrMalformedAnswer.
package prompt
