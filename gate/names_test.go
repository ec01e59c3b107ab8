package gate_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// TestReadResultRefusesUnsafeNames: a result file whose package, import
// path, test, evidence or scenario a command would read as a flag, or that no ledger
// store can keep, is refused where it is read, naming the field.
func TestReadResultRefusesUnsafeNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, field, value, want string
	}{
		{"package that is a flag", "package", "-coverprofile=../x", `package "-coverprofile=../x"`},
		{"package outside the module", "package", "../x", `package "../x"`},
		{"package holding a newline", "package", "p\n-o=x", `package "p\n-o=x"`},
		{"import path that is a flag", "import_path", "-coverprofile=../x", `import_path: unsafe name: package "-coverprofile=../x"`},
		{"test that is a flag", "test", "-test.coverprofile=x", `test "-test.coverprofile=x"`},
		{"test holding a newline", "test", "TestGate\n-o=x", `test "TestGate\n-o=x"`},
		{"evidence that is a flag", "evidence", "-o=x", `evidence: unsafe name: path "-o=x"`},
		{"evidence holding a newline", "evidence", "e\nx", `evidence: unsafe name: path "e\nx"`},
		{"scenario holding NUL", "scenario", "a\x00b", `scenario "a\x00b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := gate.Result{Outcome: gate.Outcome{Scenario: "a", Test: "TestGate/a", Package: "m", ImportPath: "example.com/m",
				Verdict: gate.Pass, Iterations: 50, Runs: 50, Floor: 20, Classes: []gate.Class{{Runs: 50}}}}
			p, err := r.Save(t.TempDir())
			require.NoError(t, err)
			_, err = gate.ReadResult(p)
			require.NoError(t, err, "the unedited result reads")
			// The hostile value is written into the file as another
			// machine would, not through Save.
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			var fields map[string]any
			require.NoError(t, json.Unmarshal(b, &fields))
			fields[tt.field] = tt.value
			b, err = json.Marshal(fields)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, 0o644))
			_, err = gate.ReadResult(p)
			require.ErrorIs(t, err, gate.ErrBadResult)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
