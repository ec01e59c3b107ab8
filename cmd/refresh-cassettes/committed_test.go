package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/cassettes/refresh"
	"github.com/codegenie/codegenie/internal/manifest"
)

// fixturesRefresh is a refresh of this repository's committed cassettes:
// the ones package fixtures' TestCassettes owns.
func fixturesRefresh() refresh.Config {
	return refresh.Config{Dir: repoRoot, Packages: []string{"./fixtures"}, Run: "^TestCassettes$", Now: fixedNow}
}

// TestCommittedCassettes: the committed cassettes (cassettes/testdata)
// are found as the ones fixtures' TestCassettes opens, and re-recorded
// through the general path (that test, under the record switch, into a
// staging directory, through cassettes.Redirect to internal/fakellm) they
// are byte for byte what is committed: recording is deterministic, and
// timing measured again that is only noise keeps the recorded one. Any
// difference means the pipeline's requests changed and the cassettes (and
// the goldens) are stale.
func TestCommittedCassettes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tests of ./fixtures")
	}
	t.Parallel()
	committed := filepath.Join(repoRoot, "cassettes", "testdata")
	m, err := manifest.Read(filepath.Join(committed, manifest.Name))
	require.NoError(t, err)
	cfg := fixturesRefresh()
	found, err := cfg.Find(t.Context())
	require.NoError(t, err)
	var paths []string
	for _, c := range found {
		paths = append(paths, c.Path)
		require.Equal(t, "github.com/codegenie/codegenie/fixtures", c.Package)
		require.Equal(t, "TestCassettes", c.Test)
		require.Equal(t, []string{"https://api.anthropic.com"}, c.Redirects, "recorded through cassettes.Redirect to the fake")
	}
	var want []string
	for _, e := range m.Cassettes {
		want = append(want, "cassettes/testdata/"+e.File)
	}
	require.Equal(t, want, paths)

	staged, err := cfg.Record(t.Context(), found)
	require.NoError(t, err)
	defer func() { require.NoError(t, staged.Close()) }()
	for _, c := range found {
		got, err := os.ReadFile(filepath.Join(staged.Dir, filepath.FromSlash(c.Path)))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(c.Path)))
		require.NoError(t, err)
		require.Equal(t, string(b), string(got),
			"%s is stale: the pipeline's requests changed. Re-record with: go run ./cmd/refresh-cassettes -pkg ./fixtures -force -reason 'why', then refresh the goldens: go test ./properties/ -run Golden -update", c.Path)
	}
}

// TestRecordThenReplay: refresh-cassettes -check over this repository's
// fixtures records every committed cassette again through its owning
// test, reviews it (no drift), replays the re-recorded cassettes through
// the same test (which compares each run with a direct run against the
// fake), and changes no file. It is not parallel: it and
// TestCommittedCassettes each hold the lock of cassettes/testdata while
// they record.
func TestRecordThenReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tests of ./fixtures")
	}
	committed := filepath.Join(repoRoot, "cassettes", "testdata")
	before := tree(t, committed)
	stdout, stderr, code := runCmd(t, repoRoot, "-pkg", "./fixtures", "-run", "^TestCassettes$", "-check")
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	require.Contains(t, stdout, "### Cassette review: no drift")
	require.Contains(t, stdout, "6 cassettes, 6 interactions: 6 unchanged.")
	require.Contains(t, stdout, "-check: nothing drifted, and the tests pass on the re-recorded cassettes; nothing was applied")
	require.Contains(t, stderr, "refresh: recording 6 cassettes through github.com/codegenie/codegenie/fixtures TestCassettes")
	require.Contains(t, stderr, "refresh: replaying the staged cassettes through github.com/codegenie/codegenie/fixtures TestCassettes")
	require.Equal(t, before, tree(t, committed))
}
