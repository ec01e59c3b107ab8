package prompttest

import (
	"fmt"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/prompt"
)

// Small is a minimal valid input: one advisory, one manifest and a recipe
// with two parameters; no examples and no attempts.
func Small() prompt.Input {
	return prompt.Input{
		Advisory: prompt.Advisory{
			ID:              "GHSA-35jh-r3h4-6jhm",
			Summary:         "Command injection in lodash",
			Ecosystem:       "npm",
			Package:         "lodash",
			VulnerableRange: "< 4.17.21",
			FixedVersion:    "4.17.21",
		},
		Files: []prompt.File{{
			Path:    "package.json",
			Content: []byte("{\n  \"dependencies\": {\n    \"lodash\": \"4.17.20\"\n  }\n}\n"),
		}},
		Recipe: prompt.RecipeSelection{
			Recipe: "bump-dependency",
			Params: map[string]string{"package": "lodash", "to": "4.17.21"},
		},
	}
}

// Realistic is about the size of what the fallback tier sends: Small with
// long details, five more source files (about 48 KiB in all), five solved
// examples and two failed attempts.
func Realistic() prompt.Input {
	in := Small()
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

// Build builds in with the zero Builder and fails the test on error.
func Build(t require.TestingT, in prompt.Input) prompt.Prompt {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	p, err := prompt.Builder{}.Build(in)
	require.NoError(t, err)
	return p
}
