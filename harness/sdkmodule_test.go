package harness_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/codegenie/codegenie/harness"
)

// TestSDKModule is a newcomer's first hour, end to end: a module of its
// own (testdata/sdkmodule) with two pipelines on the official SDKs with
// their default options, an OpenAI summariser (a call, then a stream) and
// an Anthropic reviewer (three concurrent calls, one streamed), gated
// with child processes on. Every command a report prints is run as
// printed, with sh -c, from the module root.
func TestSDKModule(t *testing.T) {
	if testing.Short() || harness.RaceEnabledForTest() {
		t.Skip("builds and tests a separate module")
	}
	t.Parallel()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(wd)
	ar, err := txtar.ParseFile(filepath.Join("testdata", "sdkmodule", "sdkmodule.txtar"))
	require.NoError(t, err)
	dir := t.TempDir()
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = strings.Replace(string(f.Data), "REPLACE", root, 1)
	}
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	edit := func(name, old, new string) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Contains(t, string(b), old)
		write(name, strings.Replace(string(b), old, new, 1))
	}
	for name, content := range files {
		write(name, content)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	write("go.sum", string(sum))

	results := t.TempDir()
	sh, env := moduleShell(t, dir, "CODEGENIE_GATE_RESULTS="+results, "XDG_CACHE_HOME="+t.TempDir(),
		"ANTHROPIC_API_KEY=test-anthropic-key", "OPENAI_API_KEY=test-openai-key")
	out, code := sh(true, "go mod tidy")
	require.Zero(t, code, "go mod tidy:\n%s", out)

	// No cassettes yet: each gate is BROKEN and prints the command that
	// records its cassette; run as printed, it records.
	out, code = sh(false, "go test ./...")
	require.Equal(t, 1, code, out)
	cmds := printedReRecords(out)
	require.Len(t, cmds, 2, "one record command per gate:\n%s", out)
	for _, c := range cmds {
		got, code := sh(false, c)
		require.Zero(t, code, "%s\n%s", c, got)
	}
	require.FileExists(t, filepath.Join(dir, "review", "testdata", "review.yaml"))
	require.FileExists(t, filepath.Join(dir, "summarise", "testdata", "summarise.yaml"))

	// Replayed, child processes on: both pass with the SDKs' defaults.
	out, code = sh(false, "go test -v ./...")
	require.Zero(t, code, out)
	require.Contains(t, out, "harness PASS review: 50/50 runs (4 in child processes)")
	require.Contains(t, out, "harness PASS summarise: 50/50 runs (4 in child processes)")

	// time.Now in a request: NONDETERMINISTIC at once, the request
	// blamed, nothing suggests re-recording.
	edit("summarise/summarise.go", `func prompt(doc string) string { return "outline: " + doc }`,
		`func prompt(doc string) string { return "outline: " + doc + " at " + time.Now().String() }`)
	edit("summarise/summarise.go", `"net/http"`, `"net/http"
	"time"`)
	out, code = sh(false, "go test ./summarise")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "NONDETERMINISTIC")
	require.Contains(t, out, "the request itself varies")
	require.NotContains(t, out, "-cassettes.record")
	require.NotContains(t, out, "re-record it:")
	write("summarise/summarise.go", files["summarise/summarise.go"])

	// Output assembled from a map, identical requests: NONDETERMINISTIC,
	// the request not blamed.
	edit("review/review.go", `	for i, a := range aspects {
		sb.WriteString(a + ": " + answers[i] + "\n")
	}`, `	m := map[string]string{}
	for i, a := range aspects {
		m[a] = answers[i]
	}
	for a, ans := range m {
		sb.WriteString(a + ": " + ans + "\n")
	}`)
	out, code = sh(false, "go test ./review")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "NONDETERMINISTIC")
	require.NotContains(t, out, "the request itself varies")
	write("review/review.go", files["review/review.go"])

	// A deliberate prompt change: BROKEN, one re-record command, which
	// records; then the gate passes.
	edit("review/review.go", `"review the " + a + " of: "`, `"please review the " + a + " of: "`)
	out, code = sh(false, "go test ./review")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "BROKEN")
	cmds = printedReRecords(out)
	require.Len(t, cmds, 1, out)
	require.Equal(t, 1, strings.Count(out, "-cassettes.record="), out)
	got, code := sh(false, cmds[0])
	require.Zero(t, code, "%s\n%s", cmds[0], got)
	out, code = sh(false, "go test ./...")
	require.Zero(t, code, out)

	// Every command every report.json lists runs as listed; a command
	// listed by several reports, with the same arguments in the same
	// directory, runs once.
	var reports []string
	require.NoError(t, filepath.WalkDir(results, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "report.json" {
			reports = append(reports, p)
		}
		return err
	}))
	require.NotEmpty(t, reports)
	listed, ran := 0, map[string]bool{}
	for _, p := range reports {
		js, err := os.ReadFile(p)
		require.NoError(t, err)
		var rep harness.Report
		require.NoError(t, json.Unmarshal(js, &rep))
		for _, c := range rep.Commands {
			require.Equal(t, dir, c.Dir, "%s", c)
			listed++
			key := strings.Join(append([]string{c.Dir}, c.Argv...), "\x00")
			if ran[key] {
				continue
			}
			ran[key] = true
			cmd := exec.CommandContext(t.Context(), c.Argv[0], c.Argv[1:]...)
			cmd.Dir, cmd.Env = c.Dir, append(env, "GOPROXY=off")
			got, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err != nil {
				require.ErrorAs(t, err, &exit, "%s\n%s", c, got)
				require.Equal(t, 1, exit.ExitCode(), "%s\n%s", c, got)
			}
			// What a command that does not run where it is printed says
			// (an error text of a run may well say "not found").
			for _, bad := range []string{"no Go files", "cannot find module", "cannot find package", "is not in std", "no such file or directory", "unknown command", "missing file"} {
				require.NotContains(t, string(got), bad, "%s\n%s", c, got)
			}
		}
	}
	t.Logf("ran the %d commands listed %d times in %d report.json files", len(ran), listed, len(reports))
}

// printedReRecords returns the re-record commands a gate output prints.
func printedReRecords(out string) []string {
	var cmds []string
	for _, l := range strings.Split(out, "\n") {
		if _, c, ok := strings.Cut(l, "re-record it: "); ok {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	return cmds
}
