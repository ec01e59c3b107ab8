package sdkgate

import (
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opencensus.io/stats/view"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/fakellm"
)

// genai links go.opencensus.io (through cloud.google.com/go/auth), whose
// package init starts a stats worker for the life of the process, which
// the leak check of TestMain would report. Nothing in these tests records
// stats (an API key and a client of our own use none of it), so it is
// stopped before any test starts.
func init() { view.Stop() }

// The variables a cloud gate test hands to the processes it starts.
const (
	// cloudDirVar is the directory the test recorded its cassettes into,
	// which the gate's child processes replay.
	cloudDirVar = "CODEGENIE_SDKGATE_CASSETTES"
	// cloudBugVar turns the map-order bug on in the pipeline of the test
	// process the test starts to show it.
	cloudBugVar = "CODEGENIE_SDKGATE_MAPBUG"
)

// cloudGate is an end-to-end gate test of a pipeline on one official SDK
// with its default options.
type cloudGate struct {
	// scenario names the gate and its cassette (scenario.yaml).
	scenario string
	// api is the root of the provider's API, which the SDK calls and the
	// cassette records; recording redirects it to a fakellm server.
	api string
	// env is the SDK's configuration, set as a user sets it.
	env map[string]string
	// pipeline makes one run: it builds its requests from a map, ranged
	// in map order when bug is set and in key order otherwise.
	pipeline func(ctx context.Context, run *harness.Run, cassette string, bug bool) ([]byte, error)
}

// cloudRole is the role of this test process in a cloud gate test.
type cloudRole int

const (
	// cloudTop is the go test process: it records, gates and shows the bug.
	cloudTop cloudRole = iota
	// cloudInner is a process the top one started (a child of the gate, or
	// the process showing the bug): it only replays.
	cloudInner
)

// check records the cassette against a fakellm server with the record
// flag (in the top process), then gates the pipeline with harness.Check:
// 50 runs, 4 in child processes, which replay the recording.
func (g cloudGate) check(t *testing.T) (*harness.Report, string, cloudRole) {
	t.Helper()
	dir, inherited := os.LookupEnv(cloudDirVar)
	role := cloudInner
	if !inherited {
		role = cloudTop
		dir = t.TempDir()
		t.Setenv(cloudDirVar, dir)
		for k, v := range g.env {
			t.Setenv(k, v)
		}
	}
	cassette := filepath.Join(dir, g.scenario+".yaml")
	cfg := harness.Config{ConfigVars: append(harness.DefaultConfigVars(),
		harness.ConfigVar{Name: cloudDirVar, Reason: "the directory the test recorded its cassettes into"},
		harness.ConfigVar{Name: cloudBugVar, Reason: "the bug the test shows, on in every process of that gate"},
	)}
	if role == cloudTop {
		srv, _ := fakellm.NewHTTPTest(t, fakellm.Config{})
		rt, err := cassettes.Redirect(g.api, srv.URL, nil)
		require.NoError(t, err)
		cfg.Cassette.RealTransport = rt
		require.NoError(t, flag.Set(cassettes.RecordFlag, regexp.QuoteMeta(filepath.Base(cassette))+"$"))
		t.Cleanup(func() { _ = flag.Set(cassettes.RecordFlag, "") })
	}
	bug := os.Getenv(cloudBugVar) != ""
	rep := cfg.Check(t, g.scenario, func(ctx context.Context, run *harness.Run) ([]byte, error) {
		return g.pipeline(ctx, run, cassette, bug)
	})
	return rep, cassette, role
}

// run is check and then, in the top process, requires the gate of the
// fresh recording to have passed with none of secrets in the cassette
// (cloudRequirePassed), and the gate with the bug to name field as the
// request field that varies (cloudRequireVaries). It returns the passed
// gate's report in the top process, else nil.
func (g cloudGate) run(t *testing.T, field string, secrets ...string) *harness.Report {
	t.Helper()
	rep, cassette, role := g.check(t)
	if role != cloudTop {
		return nil
	}
	cloudRequirePassed(t, rep, cassette, secrets...)
	cloudRequireVaries(t, cloudShowBug(t), field)
	return rep
}

// cloudRequirePassed requires rep to be the gate of a fresh recording that
// passed 50 runs, 4 of them in child processes, with each of the SDK's
// variables the pipeline read held as configuration, and its cassette
// to hold none of secrets.
func cloudRequirePassed(t *testing.T, rep *harness.Report, cassette string, secrets ...string) {
	t.Helper()
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Equal(t, 50, rep.Runs)
	require.Equal(t, 4, rep.ProcessRuns)
	require.Equal(t, []string{cassette}, rep.Recorded, "run 0 recorded the cassette under the record flag")
	require.NotNil(t, rep.Processes)
	t.Logf("held as configuration: %s; varied: %s", strings.Join(rep.Processes.EnvHeld, " "), strings.Join(rep.Processes.EnvRead, " "))
	require.Empty(t, rep.Processes.EnvRead, "the pipeline reads the SDK's configuration alone, yet the children varied these")
	b, err := os.ReadFile(cassette)
	require.NoError(t, err)
	for _, s := range secrets {
		require.NotContains(t, string(b), s)
	}
	// Opened without a manifest to vouch for it, the cassette is scanned
	// for secrets again.
	c, err := cassettes.Open(cassette, cassettes.Config{AllowUnused: true})
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

// cloudShowBug runs this test again in a new process with the map-order bug
// on, replaying the same cassette, and returns the report its failing
// gate wrote as evidence.
func cloudShowBug(t *testing.T) *harness.Report {
	t.Helper()
	evidence := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1",
		"-test.timeout=10m", "-gate.evidence="+evidence)
	for _, kv := range os.Environ() {
		// This gate's results and verdict belong to no ledger and no shard.
		if !strings.HasPrefix(kv, "CODEGENIE_GATE_") && !strings.HasPrefix(kv, "CODEGENIE_LEDGER=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, cloudBugVar+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the gate with the bug must fail:\n%s", out)
	require.Equal(t, 1, exit.ExitCode(), "%s", out)
	var reports []string
	require.NoError(t, filepath.WalkDir(evidence, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "report.json" {
			reports = append(reports, p)
		}
		return err
	}))
	require.Len(t, reports, 1, "%s", out)
	js, err := os.ReadFile(reports[0])
	require.NoError(t, err)
	var rep harness.Report
	require.NoError(t, json.Unmarshal(js, &rep))
	require.Contains(t, string(out), "NONDETERMINISTIC")
	return &rep
}

// cloudRequireVaries requires rep to be NONDETERMINISTIC over 50 runs
// (4 in child processes) because the request varies, in field alone,
// and never to suggest re-recording.
func cloudRequireVaries(t *testing.T, rep *harness.Report, field string) {
	t.Helper()
	require.Equal(t, gate.Nondeterministic, rep.Verdict, "%s", rep)
	require.Equal(t, 50, rep.Runs)
	require.Equal(t, 4, rep.ProcessRuns)
	require.NotNil(t, rep.Divergence)
	require.True(t, rep.Divergence.RequestVaries, "%s", rep)
	require.NotEmpty(t, rep.Divergence.RequestDiff)
	for _, l := range rep.Divergence.RequestDiff {
		require.True(t, strings.HasPrefix(l, "body "+field+"["), "%q is not about %s:\n%s", l, field, rep)
	}
	sizes := make([]string, len(rep.Classes))
	for i, c := range rep.Classes {
		sizes[i] = strconv.Itoa(c.Runs)
	}
	t.Logf("with the bug: %s, classes %s, the request varies in: %s", rep.Verdict, strings.Join(sizes, "+"), strings.Join(rep.Divergence.RequestDiff, "; "))
	require.Contains(t, rep.String(), "the request itself varies between runs")
	require.Contains(t, rep.String(), "body "+field+"[")
	require.Empty(t, rep.ReRecordCommand)
}
