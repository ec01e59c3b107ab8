package prompttest

import (
	"strings"

	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/prompt"
)

// tricky are fragments that attack the format: every fence marker and
// header the format uses, quotes, newlines, CR, NUL and invalid UTF-8.
var tricky = []string{
	"`", "``", "```", "````", "`````````", "```diff\n", "```text bytes=3\n", "````text bytes=0 noeol\n",
	"bytes=", " noeol", "\n", "\r\n", "\r", "\x00", "\xff", "\xc3", "é", "日本", "\"", "\\", "\t",
	"# Answer\n", "## File \"x\"\n", "# Repository files (1)\n", "# Solved examples (2)\n",
	"# Previous attempts (1)\n", "## Example 1\n", "- param \"k\": \"v\"\n", "- score: 0.5000\n",
	"--- a/go.mod\n+++ b/go.mod\n", "@@ -1 +1 @@\n", "\n\n",
}

// Text draws strings built from fragments of the format and random bytes,
// so they may be invalid UTF-8.
func Text() *rapid.Generator[string] {
	chunk := rapid.OneOf(
		rapid.SampledFrom(tricky),
		rapid.StringN(0, 6, -1),
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 6), func(b []byte) string { return string(b) }),
	)
	return rapid.Custom(func(t *rapid.T) string {
		parts := rapid.SliceOfN(chunk, 0, 8).Draw(t, "chunks")
		return strings.Join(parts, "")
	})
}

// path draws valid file paths of one to three elements, some holding
// quotes, backticks, spaces or non-ASCII letters.
func path() *rapid.Generator[string] {
	seg := rapid.OneOf(
		rapid.SampledFrom([]string{"go.mod", "package.json", "src", "x y", "q\"t", "`tick`", "é", "...", ".hidden", "```"}),
		rapid.StringMatching(`[a-zA-Z0-9_.\-]{1,6}`).Filter(func(s string) bool { return s != "." && s != ".." }),
	)
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(seg, 1, 3).Draw(t, "segments"), "/")
	})
}

// Input draws inputs that the zero Builder accepts, in no particular order:
// one to five files with distinct paths, text or random bytes as content,
// up to four examples (scores that tie after rounding included) and up to
// three attempts.
func Input() *rapid.Generator[prompt.Input] {
	text := Text()
	return rapid.Custom(func(t *rapid.T) prompt.Input {
		var in prompt.Input
		in.Advisory = prompt.Advisory{
			ID:              "GHSA-" + text.Draw(t, "advisory id"),
			Summary:         "s" + text.Draw(t, "summary"),
			Details:         text.Draw(t, "details"),
			Ecosystem:       text.Draw(t, "ecosystem"),
			Package:         text.Draw(t, "package"),
			VulnerableRange: text.Draw(t, "vulnerable range"),
			FixedVersion:    text.Draw(t, "fixed version"),
		}
		for _, p := range rapid.SliceOfNDistinct(path(), 1, 5, rapid.ID[string]).Draw(t, "paths") {
			var content []byte
			if rapid.Bool().Draw(t, "random bytes") {
				content = rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "bytes")
			} else {
				content = []byte(text.Draw(t, "content"))
			}
			in.Files = append(in.Files, prompt.File{Path: p, Content: content})
		}
		in.Recipe.Recipe = text.Draw(t, "recipe")
		keys := rapid.SliceOfNDistinct(text, 0, 4, rapid.ID[string]).Draw(t, "param keys")
		if len(keys) > 0 {
			in.Recipe.Params = map[string]string{}
			for _, k := range keys {
				in.Recipe.Params[k] = text.Draw(t, "param value")
			}
		}
		in.Examples = examples(t, text)
		for range rapid.IntRange(0, 3).Draw(t, "attempts") {
			in.Attempts = append(in.Attempts, prompt.AttemptSummary{
				Attempt: rapid.IntRange(1, 3).Draw(t, "attempt"),
				Recipe:  text.Draw(t, "attempt recipe"),
				Outcome: rapid.SampledFrom([]string{"build-failed", "tests-failed", ""}).Draw(t, "outcome"),
				Error:   text.Draw(t, "attempt error"),
			})
		}
		return in
	})
}

// examples draws up to four solved examples.
func examples(t *rapid.T, text *rapid.Generator[string]) []prompt.Example {
	var out []prompt.Example
	for range rapid.IntRange(0, 4).Draw(t, "examples") {
		out = append(out, prompt.Example{
			ID:        rapid.SampledFrom([]string{"ex-1", "ex-2", "ex-3"}).Draw(t, "example id"),
			Ecosystem: text.Draw(t, "example ecosystem"),
			Package:   text.Draw(t, "example package"),
			Advisory:  text.Draw(t, "example advisory"),
			Fix:       text.Draw(t, "example fix"),
			Score: rapid.OneOf(rapid.SampledFrom([]float64{0, 0.5, 0.91234, 0.91236, -0.00001}),
				rapid.Float64Range(-1, 1)).Draw(t, "score"),
			Band: rapid.SampledFrom([]string{"accept", "borderline"}).Draw(t, "band"),
		})
	}
	return out
}
