package harness_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/hint"
)

// The files of a throwaway module that uses this one the way another team
// would: a two-call pipeline (one plain JSON call, one streamed) and its
// gate, recording against a local fake with the record switch.
const (
	userGoMod = `module example.com/summarise

go 1.26

require github.com/codegenie/codegenie v0.0.0

replace github.com/codegenie/codegenie => REPLACE
`
	userPipeline = `// Package summarise is a two-call LLM pipeline.
package summarise

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/codegenie/codegenie/events"
)

// API is the LLM API the pipeline calls.
const API = "https://llm.example.com"

// Summarise asks for an outline (one JSON call), then streams the summary.
func Summarise(ctx context.Context, client *http.Client, rec *events.Recorder, doc string) ([]byte, error) {
	outline, err := call(ctx, client, "/v1/outline", prompt(doc))
	if err != nil {
		return nil, err
	}
	rec.Emit("outline.received", outline)
	summary, err := stream(ctx, client, "/v1/summary", outline)
	if err != nil {
		return nil, err
	}
	rec.Emit("summary.streamed", summary)
	return []byte(render(doc, outline, summary)), nil
}

// render lays out the result, one section a line.
func render(doc, outline, summary string) string {
	var sb strings.Builder
	for _, s := range [][2]string{{"doc", doc}, {"outline", outline}, {"summary", summary}} {
		sb.WriteString(s[0] + ": " + s[1] + "\n")
	}
	return sb.String()
}

// prompt lists the document's facts in a fixed order.
func prompt(doc string) string {
	facts := []string{"author=ada", "lang=go", "license=mit", "topic=" + doc, "year=2026"}
	return strings.Join(facts, ";")
}

func call(ctx context.Context, client *http.Client, path, text string) (string, error) {
	resp, err := post(ctx, client, path, text)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ Text string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.Text, nil
}

func stream(ctx context.Context, client *http.Client, path, text string) (string, error) {
	resp, err := post(ctx, client, path, text)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			sb.WriteString(d)
		}
	}
	return sb.String(), sc.Err()
}

func post(ctx context.Context, client *http.Client, path, text string) (*http.Response, error) {
	body, _ := json.Marshal(map[string]string{"prompt": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, API+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s: %s", path, resp.Status, b)
	}
	return resp, nil
}
`
	userTest = `package summarise

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/harness"
)

// fake stands in for the LLM API while recording.
func fake(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Prompt string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		switch r.URL.Path {
		case "/v1/outline":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"text": "outline of " + in.Prompt})
		case "/v1/summary":
			w.Header().Set("Content-Type", "text/event-stream")
			for _, part := range []string{"A summary", " of ", in.Prompt} {
				fmt.Fprintf(w, "data: %s\n\n", part)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSummarise(t *testing.T) {
	rt, err := cassettes.Redirect(API, fake(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.Config{Cassette: cassettes.Config{RealTransport: rt}}
	cfg.Check(t, "summarise", func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client("testdata/summarise.yaml")
		if err != nil {
			return nil, err
		}
		return Summarise(ctx, client, run.Recorder(), "determinism")
	})
}
`
	// userBug lays the result out from a map: its order varies between
	// runs.
	userBug = `func render(doc, outline, summary string) string {
	var sb strings.Builder
	for k, v := range map[string]string{"doc": doc, "outline": outline, "summary": summary} {
		sb.WriteString(k + ": " + v + "\n")
	}
	return sb.String()
}
`
)

// TestAnotherModule: a module in a temporary directory, depending on this
// one through a replace, records its own two-call pipeline against a
// local fake with the record switch, gates it for 50 runs (pass), then
// gets a map-order bug (its result laid out from a three-key map, which Go
// ranges in one of three orders) and fails with a report whose every
// command runs in that module.
func TestAnotherModule(t *testing.T) {
	if testing.Short() || harness.RaceEnabledForTest() {
		t.Skip("builds and tests a separate module")
	}
	t.Parallel()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Dir(wd)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("go.mod", strings.Replace(userGoMod, "REPLACE", root, 1))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	write("go.sum", string(sum))
	write("summarise.go", userPipeline)
	write("summarise_test.go", userTest)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "testdata"), 0o755))

	// The gates write result files to results and keep their evidence in
	// the default place, its evidence folder, not the user's cache
	// directory, here cache.
	results, cache := t.TempDir(), t.TempDir()
	goCmdIn, env := moduleShell(t, dir, "CODEGENIE_GATE_RESULTS="+results, "XDG_CACHE_HOME="+cache)
	goCmd := func(line string) (string, int) { return goCmdIn(false, line) }
	// go mod tidy reads the go.mod of every module in the graph, test
	// dependencies of dependencies included (gopkg.in/check.v1 for
	// yaml.v3), which building this repository never downloads: it runs
	// with the proxy, as on a newcomer's machine, so the test needs
	// nothing an earlier command happened to put in the module cache.
	// Everything after it builds only what tidy resolved, offline.
	out, code := goCmdIn(true, "go mod tidy")
	require.Zero(t, code, "go mod tidy (with the module proxy the go command is configured with):\n%s", out)

	out, code = goCmd("go test -count=1 -run '^TestSummarise$' . -cassettes.record='summarise\\.yaml$'")
	require.Zero(t, code, "recording:\n%s", out)
	require.FileExists(t, filepath.Join(dir, "testdata", "summarise.yaml"))
	yaml, err := os.ReadFile(filepath.Join(dir, "testdata", "summarise.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(yaml), "https://llm.example.com/v1/summary", "the cassette keeps the API's URL")
	require.Contains(t, string(yaml), "text/event-stream")

	out, code = goCmd("go test -count=1 -v -run '^TestSummarise$' .")
	require.Zero(t, code, "replaying:\n%s", out)
	require.Contains(t, out, "harness PASS summarise: 50/50 runs (4 in child processes)")

	src, err := os.ReadFile(filepath.Join(dir, "summarise.go"))
	require.NoError(t, err)
	fixed := regexp.MustCompile(`(?s)func render\(doc, outline, summary string\) string \{.*?\n\}\n`)
	write("summarise.go", fixed.ReplaceAllLiteralString(string(src), userBug))
	// The evidence the report names outlives the test without -artifacts.
	out, code = goCmd("go test -count=1 -run '^TestSummarise$' .")
	require.Equal(t, 1, code, "the map-order bug fails the gate:\n%s", out)
	require.Contains(t, out, "NONDETERMINISTIC")
	require.Contains(t, out, "output bytes differ at offset")
	require.NotContains(t, out, "re-record it:", "a nondeterminism never suggests re-recording")
	res, err := gate.ReadResults(results)
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Equal(t, gate.Nondeterministic, res[0].Verdict)
	require.True(t, filepath.IsLocal(res[0].Evidence), "the result names its evidence inside its folder: %s", res[0].Evidence)
	require.FileExists(t, filepath.Join(results, res[0].Evidence), "the result's evidence exists after go test returned")
	require.NoDirExists(t, filepath.Join(cache, "codegenie", "evidence"), "the results folder holds the evidence")

	// Every command the report prints runs in the module: none names a
	// path of this repository or a package the module does not have.
	// report.json lists the same commands as data.
	cmds := reportCommands(out)
	require.NotEmpty(t, cmds)
	var rep harness.Report
	js, err := os.ReadFile(evidencePath(t, out, "report-json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &rep))
	require.Len(t, rep.Commands, len(cmds), "report.json lists what the text prints")
	for _, same := range [][2]any{{res[0].Verdict, rep.Verdict}, {res[0].Package, rep.Package}, {res[0].ImportPath, rep.ImportPath},
		{res[0].OutputDigest, rep.OutputDigest}, {res[0].ChainDigest, rep.ChainDigest}, {res[0].Key, rep.Key}, {len(res[0].Classes), len(rep.Classes)}} {
		require.Equal(t, same[0], same[1], "report.json and the result file hold the same outcome")
	}
	for _, c := range rep.Commands {
		require.Contains(t, cmds, c.String())
		require.Equal(t, dir, c.Dir, "%s runs in the module root", c)
		if c.Purpose == hint.PurposeReproduce {
			cmd := exec.CommandContext(t.Context(), c.Argv[0], c.Argv[1:]...)
			cmd.Dir = c.Dir
			cmd.Env = append(env, "GOPROXY=off")
			got, err := cmd.CombinedOutput()
			require.Error(t, err, "argv of %s reproduces the failure:\n%s", c, got)
			require.Contains(t, string(got), "NONDETERMINISTIC")
		}
	}
	for _, c := range cmds {
		require.NotContains(t, c, "./cmd/", c)
		require.NotContains(t, c, "@latest", "a replaced module resolves through go.mod: %s", c)
		require.NotContains(t, c, root+"/", "a command names this repository: %s", c)
		got, code := goCmd(c)
		require.Contains(t, []int{0, 1}, code, "%s\n%s", c, got)
		if strings.Contains(c, "cmd/bundle diff") {
			require.Equal(t, 1, code, "bundle diff finds the divergence the gate found:\n%s", got)
			require.Contains(t, got, "output")
		}
		for _, bad := range []string{"cannot find", "is not in std", "no required module", "no Go files", "not found", "unknown command", "no such file", "@latest"} {
			require.NotContains(t, got, bad, "%s\n%s", c, got)
		}
		t.Logf("ran in the module: %s (exit %d)", c, code)
	}
}

// moduleShell returns a function that runs a command line with sh -c in
// the module at dir, offline unless online, and returns its output and
// exit code (-1: it could not run at all); and the environment it runs
// in: this one, with no gate flags, extra, and the go command's own build
// cache (XDG_CACHE_HOME may move the user's cache elsewhere).
func moduleShell(t *testing.T, dir string, extra ...string) (func(online bool, line string) (string, int), []string) {
	gocache, err := exec.CommandContext(t.Context(), "go", "env", "GOCACHE").Output()
	require.NoError(t, err)
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "CODEGENIE_GATE_SHARD=", "CODEGENIE_GATE_RESULTS=",
		"CODEGENIE_GATE_EVIDENCE=", "GOCACHE="+strings.TrimSpace(string(gocache)))
	env = append(env, extra...)
	return func(online bool, line string) (string, int) {
		cmd := exec.CommandContext(t.Context(), "sh", "-c", line)
		cmd.Dir = dir
		cmd.Env = env
		if !online {
			cmd.Env = append(cmd.Env, "GOPROXY=off")
		}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &exit):
			return string(out), exit.ExitCode()
		}
		return string(out) + err.Error(), -1
	}, env
}

// evidencePath returns the path a gate report's evidence line names for
// what ("report-json", "bundle").
func evidencePath(t *testing.T, out, what string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), what+": "); ok {
			p, _, _ = strings.Cut(p, "  (")
			return p
		}
	}
	t.Fatalf("no %s in the report:\n%s", what, out)
	return ""
}

// reportCommands returns the commands a gate report prints (after
// "reproduce: ", "compare the two runs in full: ", "re-record ...: " and
// "re-record with: ").
func reportCommands(out string) []string {
	var cmds []string
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"reproduce: ", "compare the two runs in full: ", "re-record with: ", "re-record it: "} {
			if _, c, ok := strings.Cut(l, p); ok && !seen[c] {
				seen[c] = true
				cmds = append(cmds, c)
			}
		}
	}
	return cmds
}
