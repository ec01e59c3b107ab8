package properties

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/prompt"
	"github.com/codegenie/codegenie/rag"
)

// thresholdsGen draws valid band thresholds, boundaries included.
func thresholdsGen() *rapid.Generator[rag.Thresholds] {
	unit := rapid.OneOf(rapid.Float64Range(0, 1), rapid.SampledFrom([]float64{0, 0.5, 1}))
	return rapid.Custom(func(t *rapid.T) rag.Thresholds {
		a := unit.Draw(t, "threshold a")
		b := unit.Draw(t, "threshold b")
		return rag.Thresholds{Low: min(a, b), High: max(a, b)}
	})
}

// TestPropBandClassifier: the two-threshold band is a pure function of
// (score, thresholds), monotone in the score and antitone in the
// thresholds.
func TestPropBandClassifier(t *testing.T) {
	score := rapid.OneOf(rapid.Float64Range(-1, 1), rapid.SampledFrom([]float64{-1, 0, 0.45, 0.55, 1}))
	rapidCheck(t, func(t *rapid.T) {
		th := thresholdsGen().Draw(t, "thresholds")
		s1 := score.Draw(t, "score 1")
		s2 := score.Draw(t, "score 2")
		lo, hi := min(s1, s2), max(s1, s2)

		b1, err := rag.Classify(lo, th)
		require.NoError(t, err)
		b2, err := rag.Classify(hi, th)
		require.NoError(t, err)
		require.LessOrEqual(t, b1, b2, "score %v <= %v but band %v > %v under %+v", lo, hi, b1, b2, th)

		// Purity: the same arguments give the same band, from any goroutine.
		var wg sync.WaitGroup
		got := make([]rag.Band, 8)
		for i := range got {
			wg.Go(func() { got[i], _ = rag.Classify(lo, th) })
		}
		wg.Wait()
		for _, b := range got {
			require.Equal(t, b1, b)
		}

		// Raising both thresholds never raises a band.
		up := rapid.Float64Range(0, 1-th.High).Draw(t, "raise")
		b3, err := rag.Classify(lo, rag.Thresholds{Low: th.Low + up, High: th.High + up})
		require.NoError(t, err)
		require.LessOrEqual(t, b3, b1)
	})
}

// TestPropRankingIgnoresStoreInsertionOrder: the tier's retrieval and
// everything after it are identical whatever order the store was filled
// in.
func TestPropRankingIgnoresStoreInsertionOrder(t *testing.T) {
	exs, err := fixtures.LoadExamples()
	require.NoError(t, err)
	scs := fixtures.Scenarios()
	src := newSource(t)
	strip := stripped(t)
	rapidCheck(t, func(t *rapid.T) {
		sc := rapid.SampledFrom(scs).Draw(t, "scenario")
		order1 := rapid.Permutation(exs).Draw(t, "insertion order 1")
		order2 := rapid.Permutation(exs).Draw(t, "insertion order 2")
		var res [2]fallback.Result
		for i, order := range [][]rag.Example{order1, order2} {
			store := rag.NewStore()
			for _, ex := range order {
				require.NoError(t, store.Add(ex))
			}
			r, err := runTier(t.Context(), src, sc, fallback.PathHappy,
				func(client *http.Client) fixtures.TierConfig { return fixtures.TierConfig{HTTPClient: client} },
				func(tier *fallback.Tier) { tier.Store = store })
			require.NoError(t, err)
			res[i] = r
		}
		require.Equal(t, res[0].RunKey, res[1].RunKey, "store_digest ignores insertion order")
		d := events.Compare(res[0].Events, res[1].Events, strip)
		require.Nil(t, d, "%s", d)
		require.Equal(t, res[0].Transform.DiffBytes, res[1].Transform.DiffBytes)
	})
}

// TestPropPromptIgnoresInputOrder: giving the tier the repo files, recipe
// parameters and prior attempts in another order changes nothing: not the
// prompt.built event, not the tape, not the output.
func TestPropPromptIgnoresInputOrder(t *testing.T) {
	scs := fixtures.Scenarios()
	src := newSource(t)
	strip := stripped(t)
	rapidCheck(t, func(t *rapid.T) {
		sc := rapid.SampledFrom(scs).Draw(t, "scenario")
		path := rapid.SampledFrom(paths).Draw(t, "path")
		a, err := runPipeline(t.Context(), src, sc, path, 0)
		require.NoError(t, err)

		shuffled := sc
		shuffled.Repo.Files = rapid.Permutation(sc.Repo.Files).Draw(t, "file order")
		shuffled.Prior = rapid.Permutation(sc.Prior).Draw(t, "prior order")
		keys := make([]string, 0, len(sc.Recipe.Params))
		for k := range sc.Recipe.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		keys = rapid.Permutation(keys).Draw(t, "param insertion order")
		shuffled.Recipe.Params = make(map[string]string, len(keys))
		for _, k := range keys {
			shuffled.Recipe.Params[k] = sc.Recipe.Params[k]
		}
		b, err := runPipeline(t.Context(), src, shuffled, path, 1)
		require.NoError(t, err)
		d := events.Compare(a.Events, b.Events, strip)
		require.Nil(t, d, "%s", d)
		require.Equal(t, a.Transform.DiffBytes, b.Transform.DiffBytes)
	})
}

// TestPropTapeMergeIgnoresInterleaving: lanes written by concurrent
// goroutines, under any schedule, merge into the tape a sequential writer
// produces.
func TestPropTapeMergeIgnoresInterleaving(t *testing.T) {
	laneGen := rapid.Custom(func(t *rapid.T) map[string][]int {
		names := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z]{1,3}`), 1, 6, rapid.ID[string]).Draw(t, "lane names")
		lanes := map[string][]int{}
		for _, n := range names {
			lanes[n] = rapid.SliceOfN(rapid.IntRange(0, 99), 0, 5).Draw(t, "lane "+n)
		}
		return lanes
	})
	record := func(lanes map[string][]int, yields map[string][]int, concurrent bool) []events.Event {
		r := events.NewRecorder(events.Config{})
		root, err := r.EmitAfter(0, fallback.KindRunStarted, "root")
		if err != nil {
			panic(err)
		}
		f := r.Fork(root)
		var wg sync.WaitGroup
		for _, name := range slices.Sorted(maps.Keys(lanes)) {
			work := func() {
				l := f.Lane(name)
				for i, v := range lanes[name] {
					if ys := yields[name]; i < len(ys) {
						for range ys[i] {
							runtime.Gosched()
						}
					}
					if err := l.Emit(fallback.KindRetrievalRanked, map[string]int{"v": v}); err != nil {
						panic(err)
					}
				}
			}
			if concurrent {
				wg.Go(work)
			} else {
				work()
			}
		}
		wg.Wait()
		if _, err := f.Join(); err != nil {
			panic(err)
		}
		if _, err := r.EmitAfter(root, fallback.KindPromptBuilt, "after"); err != nil {
			panic(err)
		}
		return r.Events()
	}
	rapidCheck(t, func(t *rapid.T) {
		lanes := laneGen.Draw(t, "lanes")
		yields := map[string][]int{}
		for name, vs := range lanes {
			yields[name] = rapid.SliceOfN(rapid.IntRange(0, 3), len(vs), len(vs)).Draw(t, "yields "+name)
		}
		procs := rapid.IntRange(1, 4).Draw(t, "GOMAXPROCS")
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		want := record(lanes, nil, false)
		got := record(lanes, yields, true)
		d := events.Compare(want, got, events.Nondeterministic)
		require.Nil(t, d, "%s", d)
		require.Equal(t, events.Chain(want, events.Nondeterministic), events.Chain(got, events.Nondeterministic))
	})
}

// advisoryCase is a generated pipeline input: an advisory about a package
// pinned in a generated repo's manifest.
type advisoryCase struct {
	Advisory fallback.Advisory
	Repo     fallback.RepoContext
	Recipe   fallback.RecipeSelection
	Prior    []fallback.AttemptSummary
}

func advisoryCaseGen() *rapid.Generator[advisoryCase] {
	return rapid.Custom(func(t *rapid.T) advisoryCase {
		eco := rapid.SampledFrom([]string{"npm", "Go", "PyPI"}).Draw(t, "ecosystem")
		pkg := rapid.StringMatching(`[a-z][a-z0-9]{2,8}`).Draw(t, "package")
		major := rapid.IntRange(0, 9).Draw(t, "major")
		minor := rapid.IntRange(0, 30).Draw(t, "minor")
		patch := rapid.IntRange(0, 30).Draw(t, "patch")
		old := fmt.Sprintf("%d.%d.%d", major, minor, patch)
		fixed := fmt.Sprintf("%d.%d.%d", major, minor, patch+1+rapid.IntRange(0, 5).Draw(t, "bump"))
		var manifest prompt.File
		switch eco {
		case "npm":
			manifest = prompt.File{Path: "package.json", Content: fmt.Appendf(nil, "{\n  \"name\": \"svc\",\n  \"dependencies\": {\n    %q: %q\n  }\n}\n", pkg, old)}
		case "Go":
			pkg = "example.com/" + pkg
			old, fixed = "v"+old, "v"+fixed
			manifest = prompt.File{Path: "go.mod", Content: fmt.Appendf(nil, "module example.com/svc\n\ngo 1.22\n\nrequire %s %s\n", pkg, old)}
		case "PyPI":
			manifest = prompt.File{Path: "requirements.txt", Content: fmt.Appendf(nil, "flask==3.0.0\n%s==%s\n", pkg, old)}
		}
		files := []prompt.File{manifest}
		for i := range rapid.IntRange(0, 3).Draw(t, "extra files") {
			files = append(files, prompt.File{
				Path:    fmt.Sprintf("src/f%d.txt", i),
				Content: []byte(rapid.StringMatching(`[a-z ]{0,40}`).Draw(t, "file content")),
			})
		}
		c := advisoryCase{
			Advisory: fallback.Advisory{
				ID:              "GHSA-" + rapid.StringMatching(`[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}`).Draw(t, "advisory id"),
				Summary:         rapid.StringMatching(`[A-Za-z ]{5,40}`).Draw(t, "summary"),
				Details:         rapid.StringMatching(`[A-Za-z .,]{0,200}`).Draw(t, "details"),
				Ecosystem:       eco,
				Package:         pkg,
				VulnerableRange: "< " + fixed,
				FixedVersion:    fixed,
			},
			Repo:   fallback.RepoContext{Files: rapid.Permutation(files).Draw(t, "file order")},
			Recipe: fallback.RecipeSelection{Recipe: strings.ToLower(eco) + "-dependency-bump", Params: map[string]string{"package": pkg}},
		}
		if rapid.Bool().Draw(t, "retry path") {
			c.Prior = []fallback.AttemptSummary{{Attempt: 1, Recipe: c.Recipe.Recipe, Outcome: "tests-failed", Error: "FAIL " + pkg}}
		}
		return c
	})
}

// TestPropPipelineDeterminism: for generated advisories and repos, K runs
// of the whole tier against internal/fakellm, made by the harness (fresh
// goroutine and context per run, GOMAXPROCS varied), agree byte for byte.
func TestPropPipelineDeterminism(t *testing.T) {
	const k = 5
	rapidCheck(t, func(rt *rapid.T) {
		c := advisoryCaseGen().Draw(rt, "case")
		s := func(ctx context.Context, run *harness.Run) ([]byte, error) {
			tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: fixtures.FakeHTTPClient()})
			if err != nil {
				return nil, err
			}
			res, err := tier.Run(ctx, c.Advisory, c.Repo, c.Recipe, c.Prior)
			run.SetEvents(res.Events)
			if err != nil {
				// A failure is an outcome too: it must be the same every run.
				return []byte("error: " + err.Error()), nil
			}
			return res.Transform.DiffBytes, nil
		}
		cfg := harness.Config{Iterations: k, Floor: k, Allowlist: allowlist, ArtifactDir: t.TempDir()}
		rep, err := cfg.Iterate(rt.Context(), "generated", s)
		require.NoError(rt, err, "%s", rep)
		require.Len(rt, rep.Classes, 1)
	})
}

// rapidCheck is rapid.Check with the failfile of a failure written under
// t.ArtifactDir() (kept with go test -artifacts), never into the source
// tree: only -update lets rapid write to testdata/rapid, whose committed
// failfiles TestRapidFailfiles runs. The test runs in the artifact
// directory, so it must not use paths relative to the package.
func rapidCheck(t *testing.T, prop func(*rapid.T)) {
	t.Helper()
	if !*update {
		dir := t.ArtifactDir()
		t.Chdir(dir)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("rapid wrote its failfile under %s (go test -artifacts keeps it); to keep the case as a regression seed, copy it to properties/testdata/rapid/%s/ or run the test again with -update", filepath.Join(dir, "testdata", "rapid"), t.Name())
			}
		})
	}
	rapid.Check(t, prop)
}

// TestRapidFailfiles runs every committed rapid failfile
// (testdata/rapid/<Test>/*.fail) against its test in a child process: the
// committed failures are regression seeds.
func TestRapidFailfiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rapid", "*", "*.fail"))
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skip("no rapid failfiles committed under testdata/rapid")
	}
	for _, f := range files {
		test := filepath.Base(filepath.Dir(f))
		abs, err := filepath.Abs(f)
		require.NoError(t, err)
		t.Run(test+"/"+filepath.Base(f), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+regexp.QuoteMeta(test)+"$", "-rapid.failfile="+abs)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "regression seed %s fails again:\n%s", f, out)
		})
	}
}

// TestRapidFailureStaysOutOfTree: a failing rapid property (here one made
// to fail on purpose, in a child process) leaves its failfile in the
// artifact directory and nothing in the source tree.
func TestRapidFailureStaysOutOfTree(t *testing.T) {
	if os.Getenv("PROPERTIES_RAPID_FAIL_CHILD") != "" {
		rapidCheck(t, func(t *rapid.T) {
			if rapid.IntRange(0, 100).Draw(t, "n") > 10 {
				t.Fatal("deliberate failure")
			}
		})
		return
	}
	before, err := filepath.Glob(filepath.Join("testdata", "rapid", "*", "*"))
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRapidFailureStaysOutOfTree$", "-test.artifacts", "-test.outputdir="+out)
	cmd.Env = append(os.Environ(), "PROPERTIES_RAPID_FAIL_CHILD=1")
	b, err := cmd.CombinedOutput()
	require.Error(t, err, "the child must fail:\n%s", b)
	require.Contains(t, string(b), "deliberate failure")
	after, err := filepath.Glob(filepath.Join("testdata", "rapid", "*", "*"))
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing written into testdata/rapid")
	var fails []string
	require.NoError(t, filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".fail") {
			fails = append(fails, p)
		}
		return err
	}))
	require.Len(t, fails, 1, "the failfile is in the artifact directory:\n%s", b)
}
