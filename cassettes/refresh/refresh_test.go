package refresh

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/codegenie/codegenie/internal/refreshenv"
)

var fixedNow = func() time.Time { return time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC) }

func TestSelects(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		path     string
		want     bool
	}{
		{"no pattern selects all", nil, "a/testdata/x.yaml", true},
		{"a file name", []string{"x.yaml"}, "a/testdata/x.yaml", true},
		{"a glob of names", []string{"*.happy.yaml"}, "a/testdata/x.retry.yaml", false},
		{"a full path", []string{"a/testdata/x.yaml"}, "a/testdata/x.yaml", true},
		{"a full path, another dir", []string{"b/testdata/x.yaml"}, "a/testdata/x.yaml", false},
		{"everything under a dir", []string{"a/..."}, "a/testdata/x.yaml", true},
		{"not a prefix of a name", []string{"a/..."}, "ab/testdata/x.yaml", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &resolved{Config: Config{Cassettes: tt.patterns}}
			require.Equal(t, tt.want, r.selects(tt.path))
		})
	}
}

// TestCollate: one Cassette per file of the module that was opened,
// recorded by a test that redirects to a local fake when there is one,
// else by the first test; files outside the module are left out.
func TestCollate(t *testing.T) {
	root := t.TempDir()
	abs := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	opens := []opening{
		{"m/a", "TestLive", refreshenv.Opened{Path: abs("a/testdata/x.yaml"), Opened: "testdata/x.yaml", Exists: true, Hosts: []string{"api.openai.com"}}},
		{"m/b", "TestFake", refreshenv.Opened{Path: abs("a/testdata/x.yaml"), Opened: "../a/testdata/x.yaml", Exists: true, Hosts: []string{"api.openai.com"},
			Redirects: []string{"https://api.openai.com"}}},
		{"m/a", "TestOther", refreshenv.Opened{Path: abs("a/testdata/y.yaml"), Opened: "testdata/y.yaml"}},
		{"m/a", "TestOther", refreshenv.Opened{Path: filepath.Join(t.TempDir(), "tmp.yaml"), Opened: "tmp.yaml"}},
	}
	r := &resolved{root: root}
	require.Equal(t, []Cassette{
		{Path: "a/testdata/x.yaml", Package: "m/b", Test: "TestFake", Opened: "../a/testdata/x.yaml", OpenedBy: []string{"m/a TestLive", "m/b TestFake"},
			Exists: true, Hosts: []string{"api.openai.com"}, Redirects: []string{"https://api.openai.com"}},
		{Path: "a/testdata/y.yaml", Package: "m/a", Test: "TestOther", Opened: "testdata/y.yaml", OpenedBy: []string{"m/a TestOther"}},
	}, r.collate(opens))
}

// answering serves {"answer": text} for every request.
func answering(t testing.TB, text string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"answer":%q}`, text)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// recordAt records one request to https://api.example.com, answered
// with text by a local fake, into path.
func recordAt(t testing.TB, path, text string) {
	t.Helper()
	srv := answering(t, text)
	rt, err := cassettes.Redirect("https://api.example.com", srv.URL, srv.Client().Transport)
	require.NoError(t, err)
	c, err := cassettes.Open(path, cassettes.Config{Mode: cassettes.Record, RealTransport: rt})
	require.NoError(t, err)
	resp, err := c.Client().Post("https://api.example.com/v1/answer", "application/json", strings.NewReader(`{"q":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, c.Close())
}

// module is a module with a cassette directory a/testdata.
func module(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "testdata"), 0o755))
	return root
}

// pinnedModule is a module whose cassette x, answered "one", is in its
// directory's manifest (pinned, as Apply makes a new entry).
func pinnedModule(t testing.TB, x string) string {
	t.Helper()
	root := module(t)
	recordAt(t, filepath.Join(root, x), "one")
	applyWithManifest(t, root, x)
	return root
}

// applyWithManifest applies the cassettes at rels (recorded in place) to
// their directory's new manifest.
func applyWithManifest(t testing.TB, root string, rels ...string) {
	t.Helper()
	dir := filepath.Join(root, "a", "testdata")
	stage, err := cassettes.NewStage(dir)
	require.NoError(t, err)
	var ups []cassettes.Update
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		require.NoError(t, err)
		staged := filepath.Join(stage, filepath.Base(rel))
		require.NoError(t, os.WriteFile(staged, b, 0o644))
		ups = append(ups, cassettes.Update{File: filepath.Base(rel), Staged: staged, RecordedAt: fixedNow()})
	}
	require.NoError(t, cassettes.Apply(dir, ups, fixedNow().Format(time.RFC3339)))
}

// staged is a refresh of root whose staging directory holds, for each
// path, a recording answered with the text given; it holds the locks.
func staged(t *testing.T, cfg Config, root string, texts map[string]string) *Staged {
	t.Helper()
	cfg.Dir = root
	if cfg.Now == nil {
		cfg.Now = fixedNow
	}
	r, err := cfg.resolve()
	require.NoError(t, err)
	s := &Staged{Dir: t.TempDir(), r: r, locks: map[string]*cassettes.DirLock{}, RecordedAt: fixedNow().Add(time.Hour), work: t.TempDir()}
	for rel, text := range texts {
		// Recorded over a copy of the module's cassette, as a refresh's
		// recording keeps that one's timing when it is only noise.
		at := filepath.Join(s.Dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(at), 0o755))
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
			require.NoError(t, os.WriteFile(at, b, 0o644))
		}
		recordAt(t, at, text)
		s.Cassettes = append(s.Cassettes, Cassette{Path: rel, Exists: exists(filepath.Join(root, filepath.FromSlash(rel)))})
	}
	for _, d := range s.dirs() {
		l, err := cassettes.LockDir(t.Context(), d)
		require.NoError(t, err)
		s.locks[d] = l
	}
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// files maps the files under dir (not the lock's folder) to their bytes.
func files(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.Name() == ".refresh.lock" {
				return filepath.SkipDir
			}
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return out
}

// TestApply: only what changed is applied; an unchanged refresh leaves
// every file as it was; a pinned cassette needs Force and a Reason, which
// the manifest history keeps; a directory's first manifest lists every
// cassette in it, the others as they are.
func TestApply(t *testing.T) {
	const x, y = "a/testdata/x.yaml", "a/testdata/y.yaml"
	t.Run("unchanged", func(t *testing.T) {
		root := pinnedModule(t, x)
		before := files(t, root)
		applied, err := staged(t, Config{}, root, map[string]string{x: "one"}).Apply(t.Context())
		require.NoError(t, err)
		require.Empty(t, applied)
		require.Equal(t, before, files(t, root))
	})
	t.Run("pinned", func(t *testing.T) {
		root := pinnedModule(t, x)
		before := files(t, root)
		s := staged(t, Config{}, root, map[string]string{x: "two"})
		_, err := s.Apply(t.Context())
		require.NoError(t, s.Close())
		require.ErrorIs(t, err, manifest.ErrPinned)
		require.ErrorContains(t, err, x+" changed")
		require.ErrorContains(t, err, "nothing was changed in the module")
		require.Equal(t, before, files(t, root))

		applied, err := staged(t, Config{Force: true, Reason: "the model answers two"}, root, map[string]string{x: "two"}).Apply(t.Context())
		require.NoError(t, err)
		require.Equal(t, []string{x}, applied)
		m, err := manifest.Read(filepath.Join(root, "a", "testdata", manifest.Name))
		require.NoError(t, err)
		require.Equal(t, "the model answers two", m.History[len(m.History)-1].Reason)
		require.Equal(t, "2026-11-22T04:00:00Z", m.Cassettes[0].RecordedAt)
		require.NoError(t, cassettes.Verify(filepath.Join(root, "a", "testdata"), cassettes.VerifyConfig{}))
	})
	t.Run("a directory's first manifest", func(t *testing.T) {
		root := module(t)
		recordAt(t, filepath.Join(root, x), "one")
		recordAt(t, filepath.Join(root, y), "other")
		other := files(t, root)[y]
		applied, err := staged(t, Config{}, root, map[string]string{x: "two"}).Apply(t.Context())
		require.NoError(t, err)
		require.Equal(t, []string{x}, applied)
		after := files(t, root)
		require.Equal(t, other, after[y], "the cassette not re-recorded keeps its bytes")
		m, err := manifest.Read(filepath.Join(root, "a", "testdata", manifest.Name))
		require.NoError(t, err)
		require.Len(t, m.Cassettes, 2)
		require.NoError(t, cassettes.Verify(filepath.Join(root, "a", "testdata"), cassettes.VerifyConfig{}))
	})
	t.Run("no change, no manifest", func(t *testing.T) {
		root := module(t)
		recordAt(t, filepath.Join(root, x), "one")
		before := files(t, root)
		applied, err := staged(t, Config{}, root, map[string]string{x: "one"}).Apply(t.Context())
		require.NoError(t, err)
		require.Empty(t, applied)
		require.Equal(t, before, files(t, root))
	})
	t.Run("past its maximum age", func(t *testing.T) {
		root := pinnedModule(t, x)
		mpath := filepath.Join(root, "a", "testdata", manifest.Name)
		b, err := os.ReadFile(mpath)
		require.NoError(t, err)
		var raw map[string]any
		require.NoError(t, json.Unmarshal(b, &raw))
		raw["max_age"] = "30m"
		b, err = json.MarshalIndent(raw, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(mpath, b, 0o644))
		cassette := files(t, root)[x]
		later := func() time.Time { return fixedNow().Add(2 * time.Hour) }
		applied, err := staged(t, Config{Now: later}, root, map[string]string{x: "one"}).Apply(t.Context())
		require.NoError(t, err)
		require.Equal(t, []string{x}, applied, "re-recorded unchanged, but fresh again")
		require.Equal(t, cassette, files(t, root)[x])
		m, err := manifest.Read(mpath)
		require.NoError(t, err)
		require.Equal(t, "2026-11-22T04:00:00Z", m.Cassettes[0].RecordedAt)
	})
}

// TestRecoverFindsTheCassetteDirectories: with no directory named,
// Recover works on every directory of the module holding a manifest or a
// staging folder (not hidden ones, not nested modules), removes what a
// killed refresh staged, and says what it found in each.
func TestRecoverFindsTheCassetteDirectories(t *testing.T) {
	root := pinnedModule(t, "a/testdata/x.yaml")
	b := filepath.Join(root, "b", "testdata")
	require.NoError(t, os.MkdirAll(b, 0o755))
	// What a refresh killed while recording leaves: a staging folder with
	// its marker and part of a cassette.
	stage := filepath.Join(b, ".refresh-killed")
	require.NoError(t, os.MkdirAll(stage, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stage, ".gitignore"), []byte("# a codegenie cassettes staging folder: removed by the next refresh\n*\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(stage, "x.yaml"), []byte("half a cassette"), 0o644))
	nested := filepath.Join(root, "nested")
	require.NoError(t, os.MkdirAll(filepath.Join(nested, "testdata"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(nested, "go.mod"), []byte("module example.com/nested\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(nested, "testdata", manifest.Name), []byte("not a manifest"), 0o644))

	r, err := Config{Dir: root}.resolve()
	require.NoError(t, err)
	dirs, err := r.cassetteDirs()
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(root, "a", "testdata"), b}, dirs)

	var said strings.Builder
	require.NoError(t, Config{Dir: root, Log: &said, Now: fixedNow}.Recover(t.Context()))
	require.NoDirExists(t, stage)
	require.Equal(t, "refresh: "+filepath.Join(root, "a", "testdata")+" is consistent: no refresh is left unfinished, and every cassette matches the manifest\n"+
		"refresh: "+b+": no refresh is left unfinished; it has no manifest to verify\n", said.String())
}

// TestRecordRefusesWhatFindNeverReturns: Record takes cassettes inside
// the module, each with the test that records it, and refuses anything
// else before it touches a file.
func TestRecordRefusesWhatFindNeverReturns(t *testing.T) {
	ok := Cassette{Path: "a/testdata/x.yaml", Package: "example.com/m/a", Test: "TestX", Opened: "testdata/x.yaml"}
	tests := []struct {
		name string
		edit func(c *Cassette)
	}{
		{"outside the module", func(c *Cassette) { c.Path = "../outside/x.yaml" }},
		{"absolute", func(c *Cassette) { c.Path = "/etc/x.yaml" }},
		{"not a cassette", func(c *Cassette) { c.Path = "a/testdata/x.json" }},
		{"a package that is a flag", func(c *Cassette) { c.Package = "-o=/tmp/x" }},
		{"no test", func(c *Cassette) { c.Test = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := module(t)
			before := files(t, root)
			c := ok
			tt.edit(&c)
			_, err := Config{Dir: root}.Record(t.Context(), []Cassette{c})
			require.ErrorIs(t, err, errUsage)
			require.Equal(t, before, files(t, root))
			require.NoDirExists(t, filepath.Join(root, "a", "testdata", ".refresh.lock"))
		})
	}
}
