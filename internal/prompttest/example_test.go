package prompttest_test

import (
	"fmt"
	"strings"

	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

func ExampleSmall() {
	in := prompttest.Small()
	_, err := prompt.Builder{}.Build(in)
	fmt.Println(in.Advisory.ID, len(in.Files), err)
	// Output:
	// GHSA-35jh-r3h4-6jhm 1 <nil>
}

func ExampleRealistic() {
	in := prompttest.Realistic()
	p, err := prompt.Builder{}.Build(in)
	fmt.Println(len(in.Files), len(in.Examples), len(in.Attempts), err, len(p.User) > 48<<10)
	// Output:
	// 6 5 2 <nil> true
}

// In a property test, draw with prompttest.Input().Draw(t, "input"); here
// Example draws one value from a fixed seed.
func ExampleInput() {
	for seed := range 20 {
		if _, err := (prompt.Builder{}).Build(prompttest.Input().Example(seed)); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println("every drawn input builds")
	// Output:
	// every drawn input builds
}

func ExampleText() {
	fences := 0
	for seed := range 200 {
		if strings.Contains(prompttest.Text().Example(seed), "```") {
			fences++
		}
	}
	fmt.Println(fences > 0)
	// Output:
	// true
}

// failures records what Build reports; a test passes its *testing.T.
type failures struct{ n int }

func (f *failures) Errorf(string, ...any) { f.n++ }
func (f *failures) FailNow()              {}

func ExampleBuild() {
	var t failures
	p := prompttest.Build(&t, prompttest.Small())
	fmt.Println(t.n, strings.HasPrefix(p.User, "# Task\n"))
	prompttest.Build(&t, prompt.Input{}) // no advisory: the test fails
	fmt.Println(t.n)
	// Output:
	// 0 true
	// 1
}
