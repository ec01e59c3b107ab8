package prompt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/codegenie/codegenie/prompt"
)

// realisticInput is about the size the fallback tier sends: a manifest, a
// lock-file excerpt and four source files (~48 KiB), five solved examples
// and two failed attempts.
func realisticInput() prompt.Input {
	in := exampleInput()
	in.Advisory.Details = strings.Repeat("Versions of lodash prior to 4.17.21 are vulnerable to Command Injection via the template function. ", 12)
	line := func(i int) string {
		return fmt.Sprintf("  const value%d = _.get(object, `path.${i}`, defaultValue); // line %d\n", i, i)
	}
	for f := range 5 {
		var b strings.Builder
		for i := range 120 {
			b.WriteString(line(i))
		}
		in.Files = append(in.Files, prompt.File{Path: fmt.Sprintf("src/module%d.js", 5-f), Content: []byte(b.String())})
	}
	fix := "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -1,5 +1,5 @@\n {\n   \"dependencies\": {\n-    \"minimist\": \"1.2.5\"\n+    \"minimist\": \"1.2.6\"\n   }\n }\n"
	for i := range 5 {
		in.Examples = append(in.Examples, prompt.Example{
			ID: fmt.Sprintf("ex-%03d", i), Ecosystem: "npm", Package: "minimist",
			Advisory: strings.Repeat("Prototype pollution in minimist. ", 10),
			Fix:      strings.Repeat(fix, 3), Score: 0.95 - float64(i)*0.05, Band: "accept",
		})
	}
	in.Attempts = []prompt.AttemptSummary{
		{Attempt: 2, Recipe: "bump-dependency", Outcome: "tests-failed", Error: strings.Repeat("FAIL test/template.test.js\n", 20)},
		{Attempt: 1, Recipe: "bump-dependency", Outcome: "build-failed", Error: "npm ERR! code ERESOLVE\n"},
	}
	return in
}

func BenchmarkBuild(b *testing.B) {
	in := realisticInput()
	p := build(b, in)
	b.SetBytes(int64(len(p.User)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (prompt.Builder{}).Build(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	u := build(b, realisticInput()).User
	b.SetBytes(int64(len(u)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := prompt.Parse(u); err != nil {
			b.Fatal(err)
		}
	}
}
