package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/hint"
)

var update = flag.Bool("update", false, "rewrite the rendered reports in testdata/report (review the diff, then commit it)")

// goldenDir holds one rendered report per kind of divergence.
const goldenDir = "testdata/report"

// goldenCase is a gate whose report is held in goldenDir/name.txt.
// record, when set, is the record switch in force, and the gate records
// through an API that is never reached.
type goldenCase struct {
	name     string
	scenario func(cassette string, release chan struct{}) Scenario
	record   string
}

var goldenCases = []goldenCase{
	{"output-differs", func(string, chan struct{}) Scenario {
		return func(ctx context.Context, run *Run) ([]byte, error) {
			if run.Index()%5 == 3 {
				return []byte("the answer is 41, said the model"), nil
			}
			return []byte("the answer is 42, said the model"), nil
		}
	}, ""},
	{"event-diverges", func(string, chan struct{}) Scenario {
		return func(ctx context.Context, run *Run) ([]byte, error) {
			band := "accept"
			if run.Index()%5 == 3 {
				band = "borderline"
			}
			if _, err := run.Recorder().Emit("step.retrieved", map[string]int{"documents": 3}); err != nil {
				return nil, err
			}
			if _, err := run.Recorder().Emit("step.scored", map[string]string{"band": band}); err != nil {
				return nil, err
			}
			return []byte("the same output"), nil
		}
	}, ""},
	{"varying-request", func(cassette string, _ chan struct{}) Scenario {
		return func(ctx context.Context, run *Run) ([]byte, error) {
			prompt := "alpha"
			if run.Index()%5 == 3 {
				prompt = "alpha, reworded"
			}
			return askBoth(ctx, run, cassette, prompt)
		}
	}, ""},
	{"broken-rerecord", func(cassette string, _ chan struct{}) Scenario {
		return func(ctx context.Context, run *Run) ([]byte, error) {
			return askBoth(ctx, run, cassette, "alpha, reworded")
		}
	}, ""},
	{"concurrent-miss", func(cassette string, _ chan struct{}) Scenario {
		// Both prompts changed the same way, asked at once; the first
		// miss cancels the other request.
		return func(ctx context.Context, run *Run) ([]byte, error) {
			c, err := run.Client(cassette)
			if err != nil {
				return nil, err
			}
			g, ctx := errgroup.WithContext(ctx)
			for _, p := range []string{"alpha", "beta"} {
				g.Go(func() error {
					_, err := complete(ctx, c, p+" (be brief)")
					return err
				})
			}
			if err := g.Wait(); err != nil {
				return nil, err
			}
			return []byte("asked"), nil
		}
	}, ""},
	{"credential-miss", func(cassette string, _ chan struct{}) Scenario {
		// An SDK without credentials asks the instance metadata service.
		return func(ctx context.Context, run *Run) ([]byte, error) {
			c, err := run.Client(cassette)
			if err != nil {
				return nil, err
			}
			resp, err := c.Get("http://169.254.169.254/latest/meta-data/iam/security-credentials/")
			if err != nil {
				return nil, fmt.Errorf("failed to refresh cached credentials, no EC2 IMDS role found: %w", err)
			}
			resp.Body.Close()
			return askBoth(ctx, run, cassette, "alpha")
		}
	}, ""},
	{"failed-recording", func(cassette string, _ chan struct{}) Scenario {
		// Recording a new cassette, the pipeline fails before it sends
		// anything.
		return func(ctx context.Context, run *Run) ([]byte, error) {
			_, err := run.Client(filepath.Join(filepath.Dir(cassette), "new.yaml"))
			if err != nil {
				return nil, err
			}
			return nil, errors.New("load config: unable to add custom RootCAs HTTPClient, failed to load CA bundle /etc/ca.pem (AWS_CA_BUNDLE)")
		}
	}, `new\.yaml$`},
	{"leak", leakingScenario, ""},
	{"pass", func(cassette string, _ chan struct{}) Scenario {
		return func(ctx context.Context, run *Run) ([]byte, error) {
			return askBoth(ctx, run, cassette, "alpha")
		}
	}, ""},
}

// askBoth asks the golden cassette prompt, then "beta".
func askBoth(ctx context.Context, run *Run, cassette, prompt string) ([]byte, error) {
	c, err := run.Client(cassette)
	if err != nil {
		return nil, err
	}
	a, err := complete(ctx, c, prompt)
	if err != nil {
		return nil, err
	}
	b, err := complete(ctx, c, "beta")
	return []byte(a + "; " + b), err
}

// leakingScenario's run 2 leaves a goroutine blocked until release.
func leakingScenario(_ string, release chan struct{}) Scenario {
	return func(ctx context.Context, run *Run) ([]byte, error) {
		if run.Index() == 2 {
			go goldenLeaker(release)
		}
		return []byte("done"), nil
	}
}

func goldenLeaker(release chan struct{}) { <-release }

// TestReportGolden renders the report of a real gate for each kind of
// divergence, with fixed inputs, and compares it with the golden file
// goldenDir/NAME.txt; -update rewrites the files. The temporary
// directories, the module root, the test order, goroutine ids, code
// addresses and line numbers are replaced by placeholders; the wall time
// is fixed by Config.Now.
func TestReportGolden(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the golden reports hold POSIX paths and quoting")
	}
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	require.NoError(t, err)
	if !*update {
		require.NotEmpty(t, files, "no golden reports in %s: run go test ./harness -run TestReportGolden -update", goldenDir)
		var names []string
		for _, gc := range goldenCases {
			names = append(names, filepath.Join(goldenDir, gc.name+".txt"))
		}
		slices.Sort(names)
		require.Equal(t, names, files, "one golden report per case, no stale file")
	}
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			got := renderGolden(t, gc)
			path := filepath.Join(goldenDir, gc.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(goldenDir, 0o755))
				require.NoError(t, atomicfile.WriteFile(path, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./harness -run TestReportGolden -update")
			if got != string(want) {
				t.Errorf("the report of %s differs from %s (if the change is meant, run go test ./harness -run TestReportGolden -update and review the diff):\n%s",
					gc.name, path, udiff.Unified(path, "rendered", string(want), got))
			}
		})
	}
}

// renderGolden runs gc's gate and returns its report, normalised.
func renderGolden(t *testing.T, gc goldenCase) string {
	cassetteDir := t.TempDir()
	cassette := recordCassette(t, cassetteDir, "greet", "alpha", "beta")
	artifacts := t.TempDir()
	release := make(chan struct{})
	defer close(release)
	cfg := Config{
		Iterations:   20,
		Procs:        []int{1, 2},
		Processes:    -1,
		Now:          func() time.Time { return time.Unix(0, 0) },
		ArtifactDir:  artifacts,
		ReproCommand: "go test ./pipeline -run '^TestGate$' -count=1",
	}
	if gc.record != "" {
		recordSwitch(t, gc.record)
		cfg.Cassette.RealTransport = roundTripFunc(func(*http.Request) (*http.Response, error) {
			return nil, errors.New("the API is never reached")
		})
	}
	rep, err := cfg.Iterate(t.Context(), gc.name, gc.scenario(cassette, release))
	require.NotNil(t, rep, "%v", err)
	return normaliseReport(rep.String(), map[string]string{
		artifacts:         "$ARTIFACTS",
		cassetteDir:       "$CASSETTES",
		hint.ModuleRoot(): "$MODULE",
	})
}

var (
	reGoroutine = regexp.MustCompile(`goroutine \d+`)
	reAddress   = regexp.MustCompile(`0x[0-9a-f]+`)
	reLine      = regexp.MustCompile(`\.go:\d+`)
)

// normaliseReport replaces what differs between machines and test runs
// in a rendered report: each directory of dirs (longest first) by its
// placeholder, the test order, goroutine ids, code addresses and line
// numbers.
func normaliseReport(s string, dirs map[string]string) string {
	keys := make([]string, 0, len(dirs))
	for d := range dirs {
		if d != "" {
			keys = append(keys, d)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	for _, d := range keys {
		s = strings.ReplaceAll(s, d, dirs[d])
	}
	if n := orderNote(); n != "" {
		s = strings.ReplaceAll(s, n, "")
	}
	s = reGoroutine.ReplaceAllString(s, "goroutine N")
	s = reAddress.ReplaceAllString(s, "0x?")
	return reLine.ReplaceAllString(s, ".go:N")
}

// TestNormaliseReport: the placeholders replace the longest directory
// first, and nothing else of a report.
func TestNormaliseReport(t *testing.T) {
	t.Parallel()
	got := normaliseReport("cd /m && go run x /m/tmp/a.zst\ngoroutine 12 [chan receive]:\n\t/m/h.go:31 +0x1d\n", map[string]string{"/m": "$MODULE", "/m/tmp": "$ARTIFACTS", "": "never"})
	require.Equal(t, "cd $MODULE && go run x $ARTIFACTS/a.zst\ngoroutine N [chan receive]:\n\t$MODULE/h.go:N +0x?\n", got)
	require.Equal(t, "class 1 (run 0)", normaliseReport("class 1 (run 0)", nil))
}

// TestReportTextHeadline: a report that failed for a reason other than
// a divergence still leads with the verdict, the reason and the command
// to run next.
func TestReportTextHeadline(t *testing.T) {
	t.Parallel()
	repro := gate.Command{Purpose: hint.PurposeReproduce, Argv: []string{"go", "test", "./p", "-run", "^TestX$", "-count=1"}}
	tests := []struct {
		name string
		rep  Report
		want string
	}{
		{"below the floor", Report{Outcome: gate.Outcome{Scenario: "s", Verdict: gate.Pass, Iterations: 50, Runs: 12, Floor: 20,
			Classes: []gate.Class{{Runs: 12}}, Commands: []gate.Command{repro}}, Budget: time.Second, BudgetExceeded: true, Wall: 2 * time.Second},
			"FAIL s: 12 of 50 runs in 1 class (12)\n" +
				"!!! TIME BUDGET EXCEEDED: 12 of 50 iterations ran in 2s (budget 1s); floor 20\n" +
				"12 runs are fewer than the floor of 20: the time budget ran out; speed the scenario up or raise Budget, never lower the floor to pass\n" +
				"next: reproduce: go test ./p -run '^TestX$' -count=1\n"},
		{"cancelled before any run", Report{Outcome: gate.Outcome{Scenario: "s", Iterations: 50, Floor: 20}, Cancelled: "the context was cancelled (context canceled)"},
			"NO VERDICT s: 0 of 50 runs\n" +
				"0 runs are fewer than the floor of 20: the context was cancelled (context canceled); speed the scenario up or raise Budget, never lower the floor to pass\n"},
		{"every run failed", Report{Outcome: gate.Outcome{Scenario: "s", Verdict: gate.Broken, Iterations: 20, Runs: 20, Floor: 20,
			Classes: []gate.Class{{Runs: 20, ErrorKind: "error (*errors.errorString)", Message: "no API key"}}, Commands: []gate.Command{repro}}},
			"BROKEN s: 20 runs in 1 class (20), every run failed the same way (error (*errors.errorString))\n" +
				"class 1, run 0 failed (error (*errors.errorString)):\n  no API key\n" +
				"next: reproduce: go test ./p -run '^TestX$' -count=1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rep.String()
			head, _, ok := strings.Cut(got, "\n\n")
			require.True(t, ok, "a blank line ends the answer:\n%s", got)
			require.Equal(t, tt.want, head+"\n")
		})
	}
}

// TestLongListsSummarised: a gate whose every run is a class of its own
// says so in a few words, in the verdict line, the summary and the class
// list, which names the first classes and report.json for the rest.
func TestLongListsSummarised(t *testing.T) {
	t.Parallel()
	rep := Report{Outcome: gate.Outcome{Scenario: "s", Verdict: gate.Nondeterministic, Iterations: 50, Runs: 50, Floor: 20}}
	for i := range 50 {
		size := 1
		if i < 2 {
			size = 3 - i
		}
		rep.Classes = append(rep.Classes, gate.Class{Runs: size, FirstRun: i, InProcess: size})
	}
	text := rep.String()
	head, details, _ := strings.Cut(text, "\n\n")
	require.Equal(t, "NONDETERMINISTIC s: 50 runs in 50 classes (3, 2, 48 classes of 1 run)", head)
	require.Contains(t, details, "\n  8: 1 run, first run 7,")
	require.NotContains(t, details, "\n  9: ")
	require.Contains(t, details, "  ... and 42 more classes (42 classes of 1 run); report.json lists every class\n")
	require.Contains(t, rep.Summary(), " 50 class(es) 3+2+48 classes of 1 run,")
	require.Less(t, strings.Count(text, "\n"), 20, "%s", text)
}
