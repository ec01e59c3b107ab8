package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"
)

// teamModule writes testdata/module.txtar, a module of a team's own that
// requires this repository, into a new directory, and returns it with a
// shell that runs a command line there (its combined output and exit
// status) and the built refresh-cassettes.
func teamModule(t *testing.T) (dir string, sh func(online bool, line string) (string, int), bin string) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	ar, err := txtar.ParseFile(filepath.Join("testdata", "module.txtar"))
	require.NoError(t, err)
	dir = t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(f.Data), "REPLACE", root, 1)), 0o644))
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))

	bin = filepath.Join(t.TempDir(), "refresh-cassettes")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	gocache, err := exec.CommandContext(t.Context(), "go", "env", "GOCACHE").Output()
	require.NoError(t, err)
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOCACHE="+strings.TrimSpace(string(gocache)),
		"CODEGENIE_GATE_SHARD=", "CODEGENIE_GATE_RESULTS=", "CODEGENIE_GATE_EVIDENCE=", "CODEGENIE_GATE_SUMMARY=", "CODEGENIE_LEDGER=",
		"ANTHROPIC_API_KEY=test-anthropic-key", "OPENAI_API_KEY=test-openai-key")
	sh = func(online bool, line string) (string, int) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "sh", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		if !online {
			cmd.Env = append(cmd.Env, "GOPROXY=off")
		}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil {
			require.ErrorAs(t, err, &exit, "%s\n%s", line, out)
			return string(out), exit.ExitCode()
		}
		return string(out), 0
	}
	out2, code := sh(true, "go mod tidy")
	require.Zero(t, code, "go mod tidy:\n%s", out2)
	return dir, sh, bin
}

// TestAnyModule is the cassette steward in a team's own module: cassettes
// recorded with the record switch; refresh-cassettes -dry-run lists
// exactly the module's two cassettes with the tests that record them and
// the hosts they call, changing nothing; after a prompt change,
// refresh-cassettes reviews the change (the request field and the answer's
// word diff), applies it, and go test passes on it; a second run reports
// no change and leaves every file byte for byte as it was.
func TestAnyModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a separate module")
	}
	t.Parallel()
	dir, sh, bin := teamModule(t)
	if runtime.GOOS == "windows" {
		t.Skip("the module's commands run under sh")
	}
	out, code := sh(false, "go test ./... -cassettes.record=.")
	require.Zero(t, code, out)
	rc := bin

	before := tree(t, dir)
	out, code = sh(false, rc+" -dry-run 2>/dev/null")
	require.Zero(t, code, out)
	require.Equal(t, before, tree(t, dir), "-dry-run changes nothing")
	var listed []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, ".yaml") && !strings.HasPrefix(l, " ") {
			listed = append(listed, l)
		}
	}
	require.Equal(t, []string{"review/testdata/review.yaml", "summarise/testdata/summarise.yaml"}, listed, out)
	for _, want := range []string{
		"recorded by: example.com/steward/review TestReview (opened as testdata/review.yaml)",
		"through:     a local fake or proxy for https://api.anthropic.com (cassettes.Redirect)",
		"hosts:       api.anthropic.com",
		"recorded by: example.com/steward/summarise TestSummarise (opened as testdata/summarise.yaml)",
		"through:     a local fake or proxy for https://api.openai.com (cassettes.Redirect)",
		"hosts:       api.openai.com",
		"state:       exists; its directory has no manifest (the refresh writes one)",
	} {
		require.Contains(t, out, want)
	}

	src := filepath.Join(dir, "review", "review.go")
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(src, []byte(strings.Replace(string(b), `"review the style of: "`, `"please review the style of: "`, 1)), 0o644))
	summarise := before["summarise/testdata/summarise.yaml"]

	out, code = sh(false, rc+" -review review-out 2>/dev/null")
	require.Zero(t, code, out)
	md, err := os.ReadFile(filepath.Join(dir, "review-out", "review.md"))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "review-out", "review.json"))
	t.Logf("the review of the prompt change:\n%s", md)
	for _, want := range []string{
		"### Cassette review: **drifted**",
		"`review/testdata/review.yaml` #1 (POST `https://api.anthropic.com/v1/messages`): the request changed: `[\"messages\"][0][\"content\"][0][\"text\"]",
		"reviewed:{+ please+} review the style of: + x := 1",
		"| `summarise/testdata/summarise.yaml` | unchanged | unchanged |",
	} {
		require.Contains(t, string(md), want)
	}
	require.Contains(t, out, string(md), "the review is printed")
	require.Contains(t, out, "refresh-cassettes: applied 1 cassettes:\n  review/testdata/review.yaml\n")
	after := tree(t, dir)
	require.Equal(t, summarise, after["summarise/testdata/summarise.yaml"], "the unchanged cassette keeps its bytes")
	require.NotContains(t, after, "summarise/testdata/manifest.json", "a directory with nothing to apply gets no manifest")
	require.Contains(t, after, "review/testdata/manifest.json")
	require.NotEqual(t, before["review/testdata/review.yaml"], after["review/testdata/review.yaml"])

	out, code = sh(false, "go test ./...")
	require.Zero(t, code, out)

	out, code = sh(false, rc+" 2>/dev/null")
	require.Zero(t, code, out)
	require.Contains(t, out, "### Cassette review: no drift")
	require.Contains(t, out, "refresh-cassettes: no cassette changed; every file is as it was")
	require.Equal(t, after, tree(t, dir), "a refresh that changed nothing leaves every file as it was")
}
