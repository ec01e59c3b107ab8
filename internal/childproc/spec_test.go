package childproc

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testReport is a report with one field of content.
type testReport struct {
	Header
	Output string `json:"output"`
	bad    error
}

func (r *testReport) Check() error { return r.bad }

// TestReadReportIsStrict: the parent takes a report only when it is one
// JSON value with no unknown field, of the report format, for the spec's
// test, scenario, run and nonce, and within the size bound; a missing
// report wraps os.ErrNotExist.
func TestReadReportIsStrict(t *testing.T) {
	spec := &Spec{Format: specFormat, Test: "TestX", Scenario: "s", Run: 3, Nonce: "n1"}
	good := func() map[string]any {
		h := spec.Header()
		return map[string]any{"format": h.Format, "nonce": h.Nonce, "test": h.Test, "scenario": h.Scenario, "run": h.Run, "output": "out"}
	}
	tests := []struct {
		name string
		edit func(m map[string]any)
		tail string
		want string // "" for a report taken
	}{
		{name: "good"},
		{name: "unknown field", edit: func(m map[string]any) { m["extra"] = 1 }, want: `unknown field "extra"`},
		{name: "format", edit: func(m map[string]any) { m["format"] = "codegenie-harness-child-report/0" }, want: "format "},
		{name: "nonce", edit: func(m map[string]any) { m["nonce"] = "n2" }, want: "or its nonce differs"},
		{name: "test", edit: func(m map[string]any) { m["test"] = "TestY" }, want: `is for test "TestY"`},
		{name: "scenario", edit: func(m map[string]any) { m["scenario"] = "t" }, want: `scenario "t"`},
		{name: "run", edit: func(m map[string]any) { m["run"] = 4 }, want: "run 4"},
		{name: "trailing data", tail: "{}", want: "data after the JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := good()
			if tt.edit != nil {
				tt.edit(m)
			}
			js, err := json.Marshal(m)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "report.json")
			require.NoError(t, os.WriteFile(path, append(js, tt.tail...), 0o600))
			var rep testReport
			err = readReport(path, 1<<10, spec, &rep)
			if tt.want == "" {
				require.NoError(t, err)
				require.Equal(t, "out", rep.Output)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("missing", func(t *testing.T) {
		err := readReport(filepath.Join(t.TempDir(), "none.json"), 1<<10, spec, &testReport{})
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("oversized", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "report.json")
		js, err := json.Marshal(good())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, js, 0o600))
		require.NoError(t, readReport(path, len(js), spec, &testReport{}))
		err = readReport(path, len(js)-1, spec, &testReport{})
		require.ErrorContains(t, err, "is over")
		require.False(t, errors.Is(err, os.ErrNotExist))
	})
}

// TestPlanOnly: each dimension a plan varies, taken alone, gives a plan
// that varies exactly that dimension.
func TestPlanOnly(t *testing.T) {
	p := Plan{dir: true, tmp: true, tz: "UTC", locale: "C", cpus: []int{0}, hostname: "h", domain: "d", umask: 0o077, home: true, path: true, exe: true,
		env: map[string]string{"B": "2", "A": "1"}}
	dims := p.Dims()
	require.Equal(t, []string{DimDir, DimTempDir, DimTZ, DimLocale, DimCPUs, DimHostname, DimDomain, DimUmask, DimHome, DimPath, DimExe, DimEnvPre + "A", DimEnvPre + "B"}, dims)
	for _, d := range dims {
		require.Equal(t, []string{d}, p.Only(d).Dims())
	}
	require.Equal(t, map[string]string{"B": "2"}, p.Only(DimEnvPre+"B").Env())
	require.Empty(t, Plan{}.Dims())
}

// TestTailBuffer: a child's output is kept to its last bytes, marked as
// cut, and valid UTF-8.
func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 4}
	_, _ = b.Write([]byte("ab"))
	_, _ = b.Write([]byte("cd"))
	require.Equal(t, "abcd", b.String())
	_, _ = b.Write([]byte("e\xff"))
	require.Equal(t, "[...]cde\uFFFD", b.String())
}
