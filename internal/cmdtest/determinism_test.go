package cmdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/ledger"
)

// output is what one process printed and how it ended.
type output struct {
	stdout, stderr string
	code           int
}

// runCmd runs the built command name in dir with args; the process's
// GOMAXPROCS is procs (its map seeds are its own).
func runCmd(t *testing.T, dir string, procs int, name string, args ...string) output {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), command(name), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", procs))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return output{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// sameEveryTime runs a command n times as separate processes, with
// GOMAXPROCS from 1 to 4, and requires the same bytes and exit status
// from each; it returns the first output.
func sameEveryTime(t *testing.T, n int, dir, name string, args ...string) output {
	t.Helper()
	first := runCmd(t, dir, 1, name, args...)
	for i := 1; i < n; i++ {
		got := runCmd(t, dir, 1+i%4, name, args...)
		require.Equal(t, first, got, "%s %q: process %d printed other bytes than process 0", name, args, i)
	}
	return first
}

// pinnedBundle writes a bundle of two runs that differ in three pins
// (and their output) into dir, as name.
func pinnedBundle(t *testing.T, dir, name string) string {
	t.Helper()
	tape := func(text string) []events.Event {
		rec := events.NewRecorder(events.Config{})
		_, err := rec.Emit("prompt.built", map[string]string{"user": "bump lodash"})
		require.NoError(t, err)
		_, err = rec.Emit("llm.responded", map[string]string{"text": text})
		require.NoError(t, err)
		return rec.Events()
	}
	pin := func(v string) map[string]string {
		return map[string]string{"cassette_id": "c-" + v, "model": "m-" + v, "prompt": "p-" + v, "store": "same"}
	}
	b := &bundle.Bundle{
		Metadata: bundle.Metadata{Scenario: "lodash", ToolVersion: "v1", GoVersion: "go1.26.0"},
		Runs: []bundle.Run{
			{ID: "run-a", Pin: pin("1"), Output: []byte("diff a\n"), Events: tape("a")},
			{ID: "run-b", Pin: pin("2"), Output: []byte("diff b\n"), Events: tape("b")},
		},
	}
	p := filepath.Join(dir, name)
	require.NoError(t, bundle.Config{}.WriteFile(context.Background(), p, b))
	return p
}

// TestBundleDiffDeterministic: bundle diff of runs that differ in three
// pins prints the same bytes in 20 processes, as text and as JSON.
func TestBundleDiffDeterministic(t *testing.T) {
	needCommands(t)
	t.Parallel()
	dir := t.TempDir()
	pinnedBundle(t, dir, "runs.bundle.zst")
	for _, args := range [][]string{
		{"diff", "runs.bundle.zst", "-runs", "run-a,run-b"},
		{"diff", "runs.bundle.zst", "-runs", "run-a,run-b", "-json"},
	} {
		out := sameEveryTime(t, 20, dir, "bundle", args...)
		require.Equal(t, 1, out.code, "the runs diverge: %+v", out)
		for _, pin := range []string{"cassette_id", "model", "prompt"} {
			require.Contains(t, out.stdout, pin)
		}
	}
}

// TestOutputDeterministic: every command prints the same bytes for the
// same inputs in two processes (other GOMAXPROCS, other map seeds), on
// its main paths and its error paths.
func TestOutputDeterministic(t *testing.T) {
	needCommands(t)
	t.Parallel()
	dir := t.TempDir()
	pinnedBundle(t, dir, "runs.bundle.zst")
	results := resultDirs(t, dir)
	mod := detvetModule(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	tests := []struct {
		name string
		dir  string
		args []string
	}{
		{"bundle", dir, []string{"verify", "runs.bundle.zst"}},
		{"bundle", dir, []string{"show", "runs.bundle.zst", "-payload"}},
		{"bundle", dir, []string{"diff", "runs.bundle.zst", "-runs", "run-a,run-b"}},
		{"bundle", dir, []string{"diff", "runs.bundle.zst", "runs.bundle.zst"}},
		{"bundle", dir, []string{"merge", "merged.bundle.zst", "runs.bundle.zst", "runs.bundle.zst"}},
		{"bundle", dir, []string{"state", "runs.bundle.zst", "-run", "run-a"}},
		{"bundle", dir, []string{"nope"}},
		{"gate-merge", dir, results},
		{"gate-merge", dir, []string{"-h"}},
		{"refresh-cassettes", root, []string{"-dry-run", "-pkg", "./fixtures", "-run", "^TestCassettes$"}},
		{"refresh-cassettes", root, []string{"-h"}},
		{"detvet", mod, []string{"-pkgs", ".", "./..."}},
		{"ledger", dir, []string{"-h"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			if tt.args[0] == "merge" {
				// merge refuses to replace OUT: each process writes anew.
				t.Cleanup(func() { os.Remove(filepath.Join(dir, "merged.bundle.zst")) })
				first := runCmd(t, tt.dir, 1, tt.name, tt.args...)
				require.NoError(t, os.Remove(filepath.Join(dir, "merged.bundle.zst")), "%+v", first)
				require.Equal(t, first, runCmd(t, tt.dir, 4, tt.name, tt.args...))
				return
			}
			out := sameEveryTime(t, 2, tt.dir, tt.name, tt.args...)
			require.NotEmpty(t, out.stdout+out.stderr)
		})
	}
}

// resultDirs writes the results of two shards, one scenario failing, and
// returns their directories relative to dir.
func resultDirs(t *testing.T, dir string) []string {
	t.Helper()
	res := func(scenario, shard string, v gate.Verdict, runs int) gate.Result {
		r := gate.Result{Shard: shard, Outcome: gate.Outcome{
			Scenario: scenario, Test: "TestGate/" + scenario, ImportPath: "example.com/m", Verdict: v, Iterations: 50, Runs: runs, Floor: 20,
			Classes: []gate.Class{{Runs: runs}}, Components: map[string]string{"a": "1", "b": "2", "c": "3"},
		}}
		if v == gate.Skipped {
			r.Runs, r.Classes = 0, nil
		}
		return r
	}
	shards := [][]gate.Result{
		{res("alpha", "0/2", gate.Pass, 50), res("bravo", "0/2", gate.Skipped, 0), res("charlie", "0/2", gate.Nondeterministic, 50)},
		{res("alpha", "1/2", gate.Skipped, 0), res("bravo", "1/2", gate.Pass, 10), res("charlie", "1/2", gate.Skipped, 0)},
	}
	var dirs []string
	for i, rs := range shards {
		name := fmt.Sprintf("shard-%d", i)
		for _, r := range rs {
			_, err := r.Save(filepath.Join(dir, name))
			require.NoError(t, err)
		}
		dirs = append(dirs, name)
	}
	return dirs
}

// detvetModule writes a module with two findings of detvet.
func detvetModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.go"), []byte(`package m

import (
	"fmt"
	"time"
)

func Stamp() string { return time.Now().String() }

func Keys(m map[string]int) string {
	s := ""
	for k := range m {
		s += fmt.Sprint(k)
	}
	return s
}
`), 0o644))
	return dir
}

// TestLedgerOutputDeterministic: the ledger command prints the same bytes
// in two processes (other GOMAXPROCS, other map seeds) on its main and
// error paths, for a good ledger, a tampered one and one with a torn last
// line. Commands that change the ledger get a fresh copy per process.
func TestLedgerOutputDeterministic(t *testing.T) {
	needCommands(t)
	t.Parallel()
	dir := t.TempDir()
	seedLedger(t, filepath.Join(dir, "good.jsonl"), "npm", "go", "npm", "pypi", "go")
	bad := filepath.Join(dir, "bad.jsonl")
	seedLedger(t, bad, "npm", "go", "npm")
	b, err := os.ReadFile(bad)
	require.NoError(t, err)
	b = bytes.Replace(b, []byte(`"scenario":"go"`), []byte(`"scenario":"GO"`), 1)
	b = append(b, "junk\n{\"schema\":7}\n"...)
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	torn := filepath.Join(dir, "torn.jsonl")
	seedLedger(t, torn, "npm", "go")
	f, err := os.OpenFile(torn, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema":1,"seq":3,"kind":"verd`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	tests := []struct {
		name    string
		ledger  string
		changes bool
		args    []string
		code    int
	}{
		{"verify", "good.jsonl", false, []string{"verify"}, 0},
		{"verify json", "good.jsonl", false, []string{"verify", "-json"}, 0},
		{"verify tampered", "bad.jsonl", false, []string{"verify"}, 1},
		{"verify tampered json", "bad.jsonl", false, []string{"verify", "-json"}, 1},
		{"flakes", "good.jsonl", false, []string{"flakes"}, 0},
		{"flakes json", "good.jsonl", false, []string{"flakes", "-json", "-since", "2"}, 0},
		{"flakes of a damaged ledger", "bad.jsonl", false, []string{"flakes"}, 1},
		{"rerun of an empty range", "good.jsonl", false, []string{"rerun", "-from", "99"}, 1},
		{"retain", "good.jsonl", true, []string{"retain", "-before", "3", "-reason", "old"}, 0},
		{"retain refused", "bad.jsonl", true, []string{"retain", "-before", "2", "-reason", "old"}, 1},
		{"repair", "torn.jsonl", true, []string{"repair"}, 0},
		{"retain refused after a torn line", "torn.jsonl", false, []string{"retain", "-before", "2", "-reason", "x"}, 1},
		{"install of a file", "good.jsonl", false, []string{"install"}, 2},
		{"unknown command", "good.jsonl", false, []string{"nope"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var outs []output
			for _, procs := range []int{1, 4} {
				work := dir
				if tc.changes {
					work = t.TempDir()
					b, err := os.ReadFile(filepath.Join(dir, tc.ledger))
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(work, tc.ledger), b, 0o644))
				}
				outs = append(outs, runCmd(t, work, procs, "ledger", append(tc.args, "-ledger", tc.ledger)...))
			}
			require.Equal(t, tc.code, outs[0].code, "%+v", outs[0])
			require.Equal(t, outs[0], outs[1])
		})
	}
}

// seedLedger writes a ledger at path with one verdict entry per scenario.
func seedLedger(t *testing.T, path string, scenarios ...string) {
	t.Helper()
	s, err := ledger.Open(context.Background(), path)
	require.NoError(t, err)
	defer s.Close()
	for _, sc := range scenarios {
		_, err := s.Append(context.Background(), ledger.Entry{
			Outcome: gate.Outcome{Scenario: sc, Verdict: "PASS", Key: "k-" + sc, Components: map[string]string{"cassette_id": "c1"}, Test: "TestGate/" + sc, Package: "./properties"},
		})
		require.NoError(t, err)
	}
}
