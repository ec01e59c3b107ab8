package refresh_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/codegenie/codegenie/cassettes/refresh"
)

// smallModule writes testdata/module.txtar into a new directory, records
// its cassette with the record switch, and returns the directory and the
// environment its go commands run in.
func smallModule(t *testing.T) (string, []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	ar, err := txtar.ParseFile(filepath.Join("testdata", "module.txtar"))
	require.NoError(t, err)
	dir := t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(f.Data), "REPLACE", root, 1)), 0o644))
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	// What loading the module's tests reads (its modules, and go.mod
	// files of versions our own module's build never needs) is fetched
	// once, online, so that a new machine's empty module cache does; the
	// rest runs offline.
	graph := exec.CommandContext(t.Context(), "go", "list", "-deps", "-test", "./...")
	graph.Dir, graph.Env = dir, append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := graph.CombinedOutput()
	require.NoError(t, err, "%s", out)
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	cmd := exec.CommandContext(t.Context(), "go", "test", "./...", "-count=1", "-cassettes.record=.")
	cmd.Dir, cmd.Env = dir, env
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dir, env
}

// snapshot maps the files under dir (not the refresh lock's folder) to
// their bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".refresh.lock":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}))
	return out
}

// TestRecordAndParityFailuresChangeNothing: a recording whose test fails
// (its fake is down) fails Record with the test's output; a recording
// whose request varies between recording and replay fails Parity; either
// way the module's files keep their bytes.
func TestRecordAndParityFailuresChangeNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a separate module")
	}
	dir, env := smallModule(t)
	before := snapshot(t, dir)

	cfg := refresh.Config{Dir: dir, Env: env}
	found, err := cfg.Find(t.Context())
	require.NoError(t, err)
	require.Equal(t, []refresh.Cassette{{Path: "p/testdata/answer.yaml", Package: "example.com/small/p", Test: "TestAnswer", Opened: "testdata/answer.yaml",
		OpenedBy: []string{"example.com/small/p TestAnswer"}, Exists: true, Hosts: []string{"api.example.com"}, Redirects: []string{"https://api.example.com"}}}, found)

	down := cfg
	down.Env = append(env, "DOWN=1")
	_, err = down.Record(t.Context(), found)
	require.ErrorContains(t, err, "refresh: recording through example.com/small/p TestAnswer failed")
	require.ErrorContains(t, err, "nothing was changed in the module")
	require.ErrorContains(t, err, "connection refused")
	require.Equal(t, before, snapshot(t, dir))

	stamped := cfg
	stamped.Env = append(env, "STAMP=1")
	staged, err := stamped.Record(t.Context(), found)
	require.NoError(t, err)
	err = staged.Parity(t.Context())
	require.ErrorContains(t, err, "refresh: parity: example.com/small/p TestAnswer fail when they replay the staged cassettes")
	require.ErrorContains(t, err, `["at"]`, "the miss names the field that varies")
	require.NoError(t, staged.Close())
	require.Equal(t, before, snapshot(t, dir))
}
