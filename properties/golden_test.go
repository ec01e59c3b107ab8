package properties

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kr/pretty"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the golden digests in testdata/golden (review first; commit with the cassettes), and let rapid write failfiles into testdata/rapid")

const goldenDir = "testdata/golden"

// golden is one golden digest file (format in doc.go).
type golden struct {
	Scenario     string          `json:"scenario"`
	Path         string          `json:"path"`
	RunKey       fallback.RunKey `json:"run_key"`
	OutputDigest events.Digest   `json:"output_digest"`
	ChainDigest  events.Digest   `json:"chain_digest"`
	Events       int             `json:"events"`
}

// goldenName is the file a golden is stored under: its RunKey and path
// (the path is a Run argument, not part of the pin).
func goldenName(key fallback.RunKey, path string) string {
	return key.String() + "." + path + ".json"
}

// TestGolden compares each scenario's digests with the committed golden
// for its RunKey: drift across processes, machines and Go versions shows
// up here. With -update it rewrites the goldens atomically and removes
// stale ones.
func TestGolden(t *testing.T) {
	src := newSource(t)
	strip := stripped(t)
	var got []golden
	for _, sc := range fixtures.Scenarios() {
		for _, path := range paths {
			res, err := runPipeline(t.Context(), src, sc, path, 0)
			require.NoError(t, err)
			got = append(got, golden{
				Scenario:     sc.Name,
				Path:         path,
				RunKey:       res.RunKey,
				OutputDigest: events.Sum(res.Transform.DiffBytes),
				ChainDigest:  events.Chain(res.Events, strip),
				Events:       len(res.Events),
			})
		}
	}
	if *update {
		writeGoldens(t, got)
		return
	}

	for _, p := range goldenProblems(goldenDir, got) {
		t.Error(p)
	}
}

// goldenProblems compares the computed goldens with those in dir and
// returns one message per problem: an empty directory, a missing golden
// (the pin changed), a drifted digest under the same key, an unreadable or
// stale file.
func goldenProblems(dir string, got []golden) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return []string{err.Error()}
	}
	if len(files) == 0 {
		return []string{fmt.Sprintf("no golden digests in %s: run `go test ./properties -run TestGolden -update`, review and commit them", dir)}
	}
	// The committed goldens by scenario and path, to say what changed in a
	// pin whose golden is missing.
	byName := map[string]golden{}
	for _, f := range files {
		if g, err := readGolden(f); err == nil {
			byName[g.Scenario+"/"+g.Path] = g
		}
	}
	var problems []string
	used := map[string]bool{}
	for _, g := range got {
		name := goldenName(g.RunKey, g.Path)
		used[name] = true
		want, err := readGolden(filepath.Join(dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, fmt.Sprintf("no golden for scenario %s path %s under run key %s (%s):\n"+
				"the pin changed (cassette re-recorded, template version, thresholds, model or adapter settings).\n"+
				"If the change is deliberate, run `go test ./properties -run TestGolden -update`, review the diff and commit it with the cassettes.\nrun key: %# v",
				g.Scenario, g.Path, g.RunKey, filepath.Join(dir, name), pretty.Formatter(g.RunKey)))
			if old, ok := byName[g.Scenario+"/"+g.Path]; ok {
				problems[len(problems)-1] += "\nagainst the committed golden " + goldenName(old.RunKey, old.Path) + ":\n  " +
					strings.Join(movedComponents(old.RunKey, g.RunKey), "\n  ")
			}
		case err != nil:
			problems = append(problems, err.Error())
		default:
			if diff := pretty.Diff(want, g); len(diff) > 0 {
				problems = append(problems, fmt.Sprintf("scenario %s path %s: no RunKey component moved, but the outcome moved for the same key (golden %s):\n  %s\n"+
					"Same pin, different result: a nondeterminism across processes, machines or Go versions. Find it; do not -update to hide it.",
					g.Scenario, g.Path, name, strings.Join(diff, "\n  ")))
			}
		}
	}
	for _, f := range files {
		if !used[filepath.Base(f)] {
			problems = append(problems, fmt.Sprintf("stale golden %s: no scenario has that run key and path any more; run -update to remove it", f))
		}
	}
	return problems
}

// movedComponents names each RunKey component that differs between the
// committed key a and the computed key b.
func movedComponents(a, b fallback.RunKey) []string {
	pa, pb := pinsOf(a), pinsOf(b)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(pa)) {
		if pa[name] != pb[name] {
			out = append(out, fmt.Sprintf("RunKey component %s moved: %q -> %q", name, pa[name], pb[name]))
		}
	}
	return out
}

func readGolden(path string) (golden, error) {
	var g golden
	b, err := os.ReadFile(path)
	if err != nil {
		return g, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return g, fmt.Errorf("golden %s: %w (rewrite it with -update)", path, err)
	}
	return g, nil
}

// writeGoldens rewrites every golden atomically and removes the stale ones.
func writeGoldens(t *testing.T, gs []golden) {
	t.Helper()
	writeGoldensTo(t, goldenDir, gs)
}

func writeGoldensTo(t testing.TB, goldenDir string, gs []golden) {
	t.Helper()
	require.NoError(t, os.MkdirAll(goldenDir, 0o755))
	keep := map[string]bool{}
	for _, g := range gs {
		name := goldenName(g.RunKey, g.Path)
		require.False(t, keep[name], "two scenarios share run key and path %s", name)
		keep[name] = true
		b, err := json.MarshalIndent(g, "", "  ")
		require.NoError(t, err)
		require.NoError(t, atomicfile.WriteFile(filepath.Join(goldenDir, name), append(b, '\n'), 0o644))
	}
	old, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	require.NoError(t, err)
	for _, f := range old {
		if !keep[filepath.Base(f)] {
			require.NoError(t, os.Remove(f))
			t.Logf("removed stale golden %s", f)
		}
	}
	names := slices.Sorted(maps.Keys(keep))
	t.Logf("wrote %d goldens to %s: %s", len(names), goldenDir, strings.Join(names, ", "))
}

func TestGoldenFilesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "empty golden glob %s/*.json", goldenDir)
	for _, f := range files {
		g, err := readGolden(f)
		require.NoError(t, err)
		require.Equal(t, goldenName(g.RunKey, g.Path), filepath.Base(f), "a golden's file name is its run key and path")
		require.Contains(t, paths, g.Path)
		require.False(t, g.OutputDigest.IsZero())
	}
}

// TestGoldenProblems proves the golden check can fail, on each problem.
func TestGoldenProblems(t *testing.T) {
	key := fallback.RunKey{StoreDigest: "s", RepoSnapshotSHA: "r", EmbeddingModelDigest: "e", ConfigDigest: "c"}
	g := golden{Scenario: "npm-lodash", Path: "happy", RunKey: key, OutputDigest: events.Sum([]byte("diff")), ChainDigest: events.Sum([]byte("chain")), Events: 8}
	dir := t.TempDir()
	require.Equal(t, []string{"no golden digests in " + dir + ": run `go test ./properties -run TestGolden -update`, review and commit them"}, goldenProblems(dir, []golden{g}))

	writeGoldensTo(t, dir, []golden{g})
	require.Empty(t, goldenProblems(dir, []golden{g}))

	drifted := g
	drifted.OutputDigest = events.Sum([]byte("other diff"))
	p := goldenProblems(dir, []golden{drifted})
	require.Len(t, p, 1)
	require.Contains(t, p[0], "the outcome moved for the same key")
	require.Contains(t, p[0], "OutputDigest")

	moved := g
	moved.RunKey.CassetteID = "re-recorded"
	p = goldenProblems(dir, []golden{moved})
	require.Len(t, p, 2)
	require.Contains(t, p[0], "no golden for scenario npm-lodash path happy")
	require.Contains(t, p[0], `RunKey component cassette_id moved: "" -> "re-recorded"`)
	require.Contains(t, p[1], "stale golden")

	// -update rewrites atomically and removes the stale file.
	writeGoldensTo(t, dir, []golden{moved})
	require.Empty(t, goldenProblems(dir, []golden{moved}))
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 1, "no temp files or stale goldens remain")

	require.NoError(t, os.WriteFile(filepath.Join(dir, goldenName(key, "happy")), []byte(`{"scenario": 1}`), 0o644))
	p = goldenProblems(dir, []golden{g})
	require.Len(t, p, 2)
	require.Contains(t, p[0], "rewrite it with -update")
}
