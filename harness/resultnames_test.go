package harness_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/harness"
)

// TestReadResultRefusesUnsafeNames: a result file whose package, test,
// evidence or scenario a command would read as a flag, or that no ledger
// store can keep, is refused where it is read, naming the field.
func TestReadResultRefusesUnsafeNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(r *harness.Result)
		want string
	}{
		{"package that is a flag", func(r *harness.Result) { r.Package = "-coverprofile=../x" }, `package "-coverprofile=../x"`},
		{"package outside the module", func(r *harness.Result) { r.Package = "../x" }, `package "../x"`},
		{"package holding a newline", func(r *harness.Result) { r.Package = "p\n-o=x" }, `package "p\n-o=x"`},
		{"test that is a flag", func(r *harness.Result) { r.Test = "-test.coverprofile=x" }, `test "-test.coverprofile=x"`},
		{"test holding a newline", func(r *harness.Result) { r.Test = "TestGate\n-o=x" }, `test "TestGate\n-o=x"`},
		{"evidence that is a flag", func(r *harness.Result) { r.Evidence = "-o=x" }, `evidence: unsafe name: path "-o=x"`},
		{"evidence holding a newline", func(r *harness.Result) { r.Evidence = "e\nx" }, `evidence: unsafe name: path "e\nx"`},
		{"scenario holding NUL", func(r *harness.Result) { r.Scenario = "a\x00b" }, `scenario "a\x00b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := harness.Result{Scenario: "a", Test: "TestGate/a", Package: "example.com/m",
				Verdict: harness.Pass, Iterations: 50, Runs: 50, Floor: 20, Classes: []harness.Class{{Size: 50}}}
			p, err := harness.WriteResult(t.TempDir(), r)
			require.NoError(t, err)
			_, err = harness.ReadResult(p)
			require.NoError(t, err, "the unedited result reads")
			tt.edit(&r)
			p, err = harness.WriteResult(t.TempDir(), r)
			require.NoError(t, err)
			_, err = harness.ReadResult(p)
			require.ErrorIs(t, err, harness.ErrBadResult)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
