package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The files of a throwaway module with three gated tests: one
// deterministic, one whose output names the user's home directory (which
// the gate's child processes vary), and one whose run 3 starts a
// goroutine that panics, which ends the test process.
const (
	gatedGoMod = `module example.com/gated

go 1.26

require github.com/codegenie/codegenie v0.0.0

replace github.com/codegenie/codegenie => REPLACE
`
	gatedTest = `package gated

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/codegenie/codegenie/harness"
)

func TestSteady(t *testing.T) {
	harness.Config{Iterations: 20}.Check(t, "steady", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		return []byte("the same every time"), nil
	})
}

func TestFlaky(t *testing.T) {
	harness.Config{Iterations: 20}.Check(t, "flaky", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		home, err := os.UserHomeDir()
		return []byte("written for " + home), err
	})
}

func TestCrash(t *testing.T) {
	harness.Config{Iterations: 20, Processes: -1}.Check(t, "crasher", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		if run.Index() == 3 {
			go func() { panic("stray goroutine panics in run 3") }()
			time.Sleep(time.Minute)
		}
		return []byte("fine"), nil
	})
}
`
)

// TestDownloadedArtifacts is a CI matrix as a stranger's module runs it:
// the gate's test binary, built once, runs as two shards, each into its
// own results folder, and once more for a test whose stray goroutine
// panics; the folders are moved elsewhere, as a download of the CI
// artifacts puts them, and the user's cache is cleared. gate-merge, run
// in the download directory, explains the failing scenario (its cause,
// its evidence inside the moved folders, the commands), and the bundle
// diff it prints, pasted there, compares the runs of the bundle;
// bundle show and verify read the bundle too. gate-merge reports the
// crashed gate as a crash that names the scenario and the run in
// progress, with the panic from the crash output.
func TestDownloadedArtifacts(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs a separate module's gate")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(filepath.Dir(wd))
	require.FileExists(t, filepath.Join(root, "go.mod"))
	mod := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644))
	}
	write("go.mod", strings.Replace(gatedGoMod, "REPLACE", root, 1))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	write("go.sum", string(sum))
	write("gated_test.go", gatedTest)

	// What loading the module's tests reads (its modules, and go.mod
	// files of versions our own module's build never needs) is fetched
	// once, online, so that a new machine's empty module cache does; the
	// rest runs offline.
	graph := exec.CommandContext(t.Context(), "go", "list", "-deps", "-test", "./...")
	graph.Dir, graph.Env = mod, append(os.Environ(), "GOFLAGS=-mod=mod")
	graphOut, err := graph.CombinedOutput()
	require.NoError(t, err, "listing the gated module's graph:\n%s", graphOut)

	// The children get their own home and cache, and the go command's
	// own directories and settings.
	home, cache := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "HOME="+home, "XDG_CACHE_HOME="+cache,
		"CODEGENIE_GATE_SHARD=", "CODEGENIE_GATE_RESULTS=", "CODEGENIE_GATE_EVIDENCE=", "CODEGENIE_LEDGER=")
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
		out, err := exec.CommandContext(t.Context(), "go", "env", v).Output()
		require.NoError(t, err)
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	sh := func(dir, line string) (string, int) {
		cmd := exec.CommandContext(t.Context(), "sh", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			require.NoError(t, err, "%s\n%s", line, out)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	bin := filepath.Join(t.TempDir(), "gated.test")
	out, code := sh(mod, "go test -c -o "+bin+" .")
	require.Zero(t, code, "building the gated test binary:\n%s", out)

	// The shards, and the crashing gate, write into folders of a runner's
	// workspace.
	work := t.TempDir()
	gate := func(folder string, args ...string) string {
		cmd := exec.CommandContext(t.Context(), bin, append(args, "-gate.results="+filepath.Join(work, folder))...)
		cmd.Dir, cmd.Env = mod, env
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	for i, shard := range []string{"0/2", "1/2"} {
		folder := "shard-" + string(rune('0'+i))
		out := gate(folder, "-test.run=^(TestSteady|TestFlaky)$", "-gate.shard="+shard)
		files, err := filepath.Glob(filepath.Join(work, folder, "*.json"))
		require.NoError(t, err)
		require.Len(t, files, 2, "a result per scenario, run or skipped:\n%s", out)
	}
	out = gate("crash", "-test.run=^TestCrash$")
	require.Contains(t, out, "panic: stray goroutine panics in run 3", "the gated test crashed:\n%s", out)

	// The download: the folders move into the module checkout of the merge
	// job (or a laptop), and nothing of the runner stays.
	download := filepath.Join(mod, "artifacts")
	require.NoError(t, os.MkdirAll(download, 0o755))
	for from, to := range map[string]string{"shard-0": "gate-0", "shard-1": "gate-1", "crash": "gate-crash"} {
		require.NoError(t, os.Rename(filepath.Join(work, from), filepath.Join(download, to)))
	}
	require.NoError(t, os.RemoveAll(filepath.Join(cache, "codegenie")))

	t.Chdir(download)
	var stdout, stderr bytes.Buffer
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	getenv := func(k string) string {
		if k == "GITHUB_STEP_SUMMARY" {
			return summary
		}
		return ""
	}
	err = run(context.Background(), []string{"gate-0", "gate-1"}, getenv, &stdout, &stderr)
	require.Equal(t, 1, exitCode(err, &stderr), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	got := stdout.String()
	t.Logf("gate-merge gate-0 gate-1:\n%s", got)
	require.Contains(t, got, "scenarios: 2 (1 PASS, 1 NONDETERMINISTIC)")
	require.Contains(t, got, "--- NONDETERMINISTIC flaky (test TestFlaky, package example.com/gated, shard ")
	require.Contains(t, got, "only child processes differed")
	require.Contains(t, got, "the outcome depends on: HOME", "the cause")
	evidence := regexp.MustCompile(`(?m)^  evidence: (gate-[01]/evidence/\S+\.bundle\.zst) `).FindStringSubmatch(got)
	require.NotNil(t, evidence, "the evidence inside the moved folders:\n%s", got)
	require.FileExists(t, evidence[1])
	require.Regexp(t, `^gate-[01]/evidence/example\.com_gated_TestFlaky-[0-9a-f]{8}/gate-000001/flaky/flaky\.bundle\.zst$`, evidence[1],
		"the evidence folder names the package and test, no path of the runner")
	require.Contains(t, got, "  reproduce, in the module root:\n    go test . -run '^TestFlaky$' -count=1\n")
	diff := regexp.MustCompile(`(?m)^  compare the two runs in full, from the directory the merge ran in:\n    (.*)$`).FindStringSubmatch(got)
	require.NotNil(t, diff, "the bundle diff command:\n%s", got)
	require.Contains(t, diff[1], "go run github.com/codegenie/codegenie/cmd/bundle diff "+evidence[1]+" -runs run-")
	require.NotContains(t, got, work, "nothing names the runner's folders")
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.Contains(t, string(md), "### `NONDETERMINISTIC` `flaky`")
	require.Contains(t, string(md), "```sh\n"+diff[1]+"\n```\n")

	// The printed command, pasted in the download directory, compares the
	// two runs; bundle show and verify read the same bundle.
	out, code = sh(download, diff[1])
	require.Equal(t, 1, code, "the runs differ:\n%s", out)
	require.Contains(t, out, "output")
	for _, bad := range []string{"no such file", "cannot find", "not found"} {
		require.NotContains(t, out, bad)
	}
	tool := strings.TrimSuffix(diff[1][:strings.Index(diff[1], " diff ")], " ")
	for _, sub := range []string{"verify", "show"} {
		out, code = sh(download, tool+" "+sub+" "+evidence[1])
		require.Zero(t, code, "bundle %s on the downloaded bundle:\n%s", sub, out)
	}

	// The crashed gate left a result: a crash, naming the scenario and the
	// run in progress, with the panic from its crash output.
	stdout.Reset()
	stderr.Reset()
	err = run(context.Background(), []string{"gate-crash"}, noEnv, &stdout, &stderr)
	require.Equal(t, 1, exitCode(err, &stderr), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	got = stdout.String()
	t.Logf("gate-merge gate-crash:\n%s", got)
	require.Contains(t, got, "--- CRASHED crasher (test TestCrash, package example.com/gated)")
	require.Contains(t, got, "the test process died during run 3 of 20")
	require.Regexp(t, `(?m)^  crash output: gate-crash/crasher-[0-9a-f]{16}\.crash\.txt\n    panic: stray goroutine panics in run 3$`, got)
	require.Contains(t, got, "go test . -run '^TestCrash$' -count=1")
	require.NotContains(t, stdout.String()+stderr.String(), "missing")
}
