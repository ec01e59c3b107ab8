package prompt_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

// exampleInput is the input the examples start from: advisory
// GHSA-35jh-r3h4-6jhm (command injection in lodash < 4.17.21), the
// package.json that pins lodash 4.17.20, and the bump-dependency recipe.
// ExampleBuilder_Build prints all of it.
func exampleInput() prompt.Input { return prompttest.Small() }

func ExampleBuilder_Build() {
	p, err := prompt.Builder{}.Build(exampleInput())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(p.User)
	// Output:
	// # Task
	// Fix the security advisory below in the repository files shown. Answer with one unified diff in a ```diff block, as the system prompt describes.
	//
	// # Advisory
	// - id: "GHSA-35jh-r3h4-6jhm"
	// - ecosystem: "npm"
	// - package: "lodash"
	// - vulnerable range: "< 4.17.21"
	// - fixed version: "4.17.21"
	//
	// ## Summary
	// ```text bytes=27 noeol
	// Command injection in lodash
	// ```
	//
	// ## Details
	// ```text bytes=0
	// ```
	//
	// # Recipe
	// - recipe: "bump-dependency"
	// - param "package": "lodash"
	// - param "to": "4.17.21"
	//
	// # Repository files (1)
	//
	// ## File "package.json"
	// ```text bytes=52
	// {
	//   "dependencies": {
	//     "lodash": "4.17.20"
	//   }
	// }
	// ```
	//
	// # Answer
	// Reply with exactly one ```diff fenced block holding a unified diff against the files above, with a/ and b/ path prefixes. Nothing else in the reply is read.
}

func ExampleBuilder_Build_retry() {
	in := exampleInput()
	in.Attempts = []prompt.AttemptSummary{{Attempt: 1, Recipe: "bump-dependency", Outcome: "tests-failed", Error: "TypeError: _.template is not a function\n"}}
	p, err := prompt.Builder{}.Build(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, retry, _ := strings.Cut(p.User, "# Previous attempts")
	retry, _, _ = strings.Cut(retry, "# Answer")
	fmt.Print("# Previous attempts" + retry)
	// Output:
	// # Previous attempts (1)
	// These attempts at this advisory already failed. Do not repeat them: make a different change that avoids each failure.
	//
	// ## Attempt 1
	// - recipe: "bump-dependency"
	// - outcome: "tests-failed"
	// ### Error
	// ```text bytes=40
	// TypeError: _.template is not a function
	// ```
}

func ExampleBuilder_Build_badInput() {
	in := exampleInput()
	in.Files = append(in.Files, prompt.File{Path: "../etc/passwd"})
	_, err := prompt.Builder{}.Build(in)
	var ie *prompt.InputError
	fmt.Println(errors.As(err, &ie), errors.Is(err, prompt.ErrInvalidPath))
	fmt.Println(err)
	// Output:
	// true true
	// prompt: Files[1].Path ("../etc/passwd"): invalid file path: not clean (empty, "." or ".." element, or trailing slash); use a clean slash-separated path relative to the repository root, e.g. "pkg/go.mod"
}

func ExampleBuilder_Canonical() {
	in := exampleInput()
	in.Files = append(in.Files, prompt.File{Path: "README.md", Content: []byte("# app\n")})
	in.Examples = []prompt.Example{
		{ID: "ex-b", Score: 0.81234},
		{ID: "ex-a", Score: 0.91236},
	}
	c, err := prompt.Builder{}.Canonical(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range c.Files {
		fmt.Println(f.Path)
	}
	for _, e := range c.Examples {
		fmt.Println(e.ID, e.Score)
	}
	// Output:
	// README.md
	// package.json
	// ex-a 0.9124
	// ex-b 0.8123
}

func ExampleParseAnswer() {
	answer := "Bump lodash to the fixed version.\n\n```diff\n" +
		"--- a/package.json\n+++ b/package.json\n@@ -1,1 +1,1 @@\n-\"lodash\": \"4.17.20\"\n+\"lodash\": \"4.17.21\"\n" +
		"```\n"
	diff, err := prompt.ParseAnswer(answer)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(diff))

	_, err = prompt.ParseAnswer("I cannot help with that.")
	fmt.Println(errors.Is(err, prompt.ErrNoDiff))
	// Output:
	// --- a/package.json
	// +++ b/package.json
	// @@ -1,1 +1,1 @@
	// -"lodash": "4.17.20"
	// +"lodash": "4.17.21"
	// true
}

func ExampleFormatAnswer() {
	diff := []byte("--- a/go.mod\n+++ b/go.mod\n@@ -3 +3 @@\n-require golang.org/x/net v0.22.0\n+require golang.org/x/net v0.23.0\n")
	fmt.Print(prompt.FormatAnswer(diff))
	// Output:
	// ```diff
	// --- a/go.mod
	// +++ b/go.mod
	// @@ -3 +3 @@
	// -require golang.org/x/net v0.22.0
	// +require golang.org/x/net v0.23.0
	// ```
}
