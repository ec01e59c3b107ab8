package cassettes

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/refreshenv"
)

// withRefreshRun makes this process a test binary a refresh runs with h,
// until the test ends.
func withRefreshRun(t *testing.T, h *refreshHooks) {
	t.Helper()
	old := refreshRun
	refreshRun = h
	t.Cleanup(func() { refreshRun = old })
}

// numberingServer answers "answer N" for its N-th request (from 1).
func numberingServer(t testing.TB) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"text":"answer %d"}`, n.Add(1))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRefreshStagesRecordings: in a test binary a refresh runs with a
// staging directory, a recording is saved to the staged copy (the path
// from the module root under the stage), the module's cassette and
// manifest keep their bytes, a later Open replays the staged copy (no
// manifest vouches for it, and none is asked), and Discard removes it.
func TestRefreshStagesRecordings(t *testing.T) {
	root, stage := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644))
	dir := filepath.Join(root, "pkg", "testdata")
	srv := numberingServer(t)
	record := func(path string) *Cassette {
		c, err := Open(path, Config{Mode: Record, RealTransport: srv.Client().Transport})
		require.NoError(t, err)
		readAll(t, do(t, c.Client(), srv.URL, reqA))
		require.NoError(t, c.Close())
		return c
	}
	committed := filepath.Join(dir, "a.yaml")
	record(committed)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	sdir, err := NewStage(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(committed)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(sdir, "a.yaml"), b, 0o644))
	require.NoError(t, Apply(dir, []Update{{File: "a.yaml", Staged: filepath.Join(sdir, "a.yaml")}}, ""))
	before := treeSnapshot(t, root)

	withRefreshRun(t, &refreshHooks{stage: stage, root: root})
	c := record(committed)
	staged := filepath.Join(stage, "pkg", "testdata", "a.yaml")
	require.FileExists(t, staged)
	require.Equal(t, before, treeSnapshot(t, root), "the module's cassette and manifest are left as they were")

	r, err := Open(committed, Config{})
	require.NoError(t, err, "the staged copy replays though the manifest records the committed one")
	require.Equal(t, `{"text":"answer 2"}`, readAll(t, do(t, r.Client(), srv.URL, reqA)))
	require.NoError(t, r.Close())

	require.NoError(t, c.Discard())
	require.NoFileExists(t, staged)
	require.Equal(t, before, treeSnapshot(t, root))
	r, err = Open(committed, Config{})
	require.NoError(t, err)
	require.Equal(t, `{"text":"answer 1"}`, readAll(t, do(t, r.Client(), srv.URL, reqA)), "without a staged copy, the committed one")
	require.NoError(t, r.Close())

	outside := filepath.Join(t.TempDir(), "o.yaml")
	record(outside)
	require.FileExists(t, outside, "a cassette outside the module is not staged")
}

// TestRefreshListsOpens: in a test binary a refresh runs with a listing
// file, every Open appends one line: the path, as opened and absolute,
// whether it exists, the hosts it recorded, and the API roots the process
// redirects by then.
func TestRefreshListsOpens(t *testing.T) {
	root := t.TempDir()
	list := filepath.Join(t.TempDir(), "list.jsonl")
	withRefreshRun(t, &refreshHooks{list: list, root: root})
	srv := numberingServer(t)
	dir := filepath.Join(root, "testdata")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := recordPlain(t, dir, "a", srv, []plainReq{reqA})
	_, err := Redirect("https://api.anthropic.com/", srv.URL, nil)
	require.NoError(t, err)

	c, err := Open(path, Config{})
	require.NoError(t, err)
	readAll(t, do(t, c.Client(), srv.URL, reqA))
	require.NoError(t, c.Close())
	missing := filepath.Join(dir, "b.yaml")
	_, err = Open(missing, Config{})
	require.ErrorIs(t, err, ErrCassetteNotFound)

	got := listed[refreshenv.Opened](t, list)
	host := srv.Listener.Addr().String()
	require.Equal(t, []refreshenv.Opened{
		{Path: path, Opened: filepath.ToSlash(path), Exists: true, Hosts: []string{host}, Redirects: []string{"https://api.anthropic.com"}},
		{Path: missing, Opened: filepath.ToSlash(missing), Redirects: []string{"https://api.anthropic.com"}},
	}, got)
}
