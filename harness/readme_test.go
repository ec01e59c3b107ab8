package harness_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEExample: the gated test the module's README and the package
// documentation show is the code ExampleCheck holds, line for line, so
// both compile.
func TestREADMEExample(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		return string(b)
	}
	held := checkCall(t, "example_test.go", read("example_test.go"))
	require.Equal(t, checkCall(t, "README.md", read("../README.md")), held,
		"README.md's example and ExampleCheck in harness/example_test.go differ: keep them the same code")
	doc := strings.ReplaceAll(read("doc.go"), "\n//", "\n")
	require.Equal(t, checkCall(t, "doc.go", doc), held,
		"the package documentation's example and ExampleCheck in harness/example_test.go differ: keep them the same code")
}

// checkCall returns the lines of the first harness.Check call in text, from
// the line that starts it to the "})" that ends it, each without its
// leading tabs.
func checkCall(t testing.TB, name, text string) []string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimLeft(l, "\t"), "harness.Check(t, ") {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, "\t"))
		var call []string
		for _, c := range lines[i:] {
			call = append(call, strings.TrimLeft(c, "\t"))
			if c == strings.Repeat("\t", indent)+"})" {
				return call
			}
		}
		t.Fatalf("%s: the harness.Check call on line %d never ends", name, i+1)
	}
	t.Fatalf("%s: no harness.Check(t, ...) call", name)
	return nil
}
