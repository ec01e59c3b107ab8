package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
)

// tape records a run of a pipeline's kinds whose completion is the given
// text.
func tape(t testing.TB, completion string) []events.Event {
	t.Helper()
	r := events.NewRecorder(events.Config{})
	for _, s := range []struct {
		kind    events.Kind
		payload any
	}{
		{"run.started", map[string]string{"run_key_digest": "rk-1"}},
		{"prompt.built", map[string]string{"user": "fix lodash"}},
		{"llm.requested", map[string]string{"request_digest": "d"}},
		{"llm.responded", map[string]string{"text": completion}},
		{"transform.produced", map[string]string{"diff": completion}},
	} {
		_, err := r.Emit(s.kind, s.payload)
		require.NoError(t, err)
	}
	return r.Events()
}

func meta() bundle.Metadata {
	return bundle.Metadata{Scenario: "lodash", GoVersion: "go1.26.8", ToolVersion: "test"}
}

func oneRun(id, completion string, t testing.TB) bundle.Run {
	return bundle.Run{ID: id, Pin: map[string]string{"run_key": "rk-1"}, Output: []byte(completion), Events: tape(t, completion)}
}

func write(t testing.TB, name string, runs ...bundle.Run) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, bundle.Config{}.WriteFile(context.Background(), p, &bundle.Bundle{Metadata: meta(), Runs: runs}))
	return p
}

func runCmd(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &bytes.Buffer{})
	return out.String(), err
}

func TestCommands(t *testing.T) {
	a := write(t, "a"+bundle.FileExt, oneRun("run-000", "+lodash 4.17.21", t))
	a2 := write(t, "a2"+bundle.FileExt, oneRun("run-001", "+lodash 4.17.21", t))
	b := write(t, "b"+bundle.FileExt, oneRun("run-002", "+lodash 4.17.20", t))
	many := write(t, "many"+bundle.FileExt, oneRun("run-000", "+lodash 4.17.21", t), oneRun("run-001", "+lodash 4.17.21", t), oneRun("run-002", "+lodash 4.17.20", t))
	bad := filepath.Join(t.TempDir(), "bad"+bundle.FileExt)
	raw, err := os.ReadFile(a)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bad, raw[:len(raw)/2], 0o644))

	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"verify ok", []string{"verify", a, b}, 0, "1 runs, 5 events"},
		{"verify many", []string{"verify", many}, 0, `run run-002: 5 events`},
		{"verify invalid", []string{"verify", bad}, 1, ""},
		{"show range", []string{"show", a, "-from", "2", "-to", "3"}, 0, "seq 3 parent 2 llm.requested"},
		{"show one run of many", []string{"show", many, "-run", "run-001", "-from", "5"}, 0, "#9 run run-001 seq 5"},
		{"state", []string{"state", a, "-at", "2"}, 0, `"user": "fix lodash"`},
		{"state of a run", []string{"state", many, "-run", "run-002"}, 0, `"diff": "+lodash 4.17.20"`},
		{"state needs the run", []string{"state", many}, 1, ""},
		{"state past end", []string{"state", a, "-at", "9"}, 1, ""},
		{"diff identical", []string{"diff", a, a2}, 0, "no divergence"},
		{"diff divergent", []string{"diff", a, b}, 1, "first divergent event: index 3, kind llm.responded"},
		{"diff runs of one bundle", []string{"diff", many, "-runs", "run-000,run-002"}, 1, "outputs differ at byte 14"},
		{"diff equal runs of one bundle", []string{"diff", many, "-runs", "run-000,run-001"}, 0, "no divergence"},
		{"diff runs of two bundles", []string{"diff", many, a, "-runs", "run-002,run-000"}, 1, "reproduce: go run github.com/codegenie/codegenie/cmd/bundle diff"},
		{"diff json", []string{"diff", "-json", a, b}, 1, `"field": "Payload"`},
		{"diff needs runs", []string{"diff", many, a}, 1, "holds 3 runs (run-000, run-001, run-002): name one of them; for example: go run github.com/codegenie/codegenie/cmd/bundle diff"},
		{"diff unknown run", []string{"diff", many, "-runs", "run-000,run-009"}, 1, ""},
		{"no subcommand", nil, 2, ""},
		{"unknown subcommand", []string{"frobnicate"}, 2, ""},
		{"diff one arg", []string{"diff", a}, 2, ""},
		{"diff bad runs", []string{"diff", a, "-runs", "x"}, 2, ""},
		{"bad flag", []string{"show", a, "-from", "x"}, 2, ""},
		{"to before from", []string{"show", a, "-from", "3", "-to", "2"}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCmd(tc.args...)
			var errb bytes.Buffer
			require.Equal(t, tc.code, exitCode(err, &errb), "err: %v\nout:\n%s", err, out)
			if tc.code != 0 {
				require.True(t, strings.HasPrefix(errb.String(), "bundle: "), errb.String())
			}
			require.Contains(t, out+errb.String(), tc.contains)
		})
	}
}

// TestDiffFindsAnOutputOnlyDivergence: two runs with equal events and
// different outputs diverge, and the report says where.
func TestDiffFindsAnOutputOnlyDivergence(t *testing.T) {
	r0 := oneRun("run-000", "x", t)
	r1 := r0
	r1.ID, r1.Output = "run-001", []byte("y")
	p := write(t, "b"+bundle.FileExt, r0, r1)
	out, err := runCmd("diff", p, "-runs", "run-000,run-001")
	require.ErrorIs(t, err, errDiverged)
	require.Contains(t, out, "the events do not diverge")
	require.Contains(t, out, "outputs differ at byte 0")
}

func TestDiffJSONIsTheReport(t *testing.T) {
	a := write(t, "a"+bundle.FileExt, oneRun("r", "x", t))
	b := write(t, "b"+bundle.FileExt, oneRun("r", "y", t))
	out, err := runCmd("diff", a, b, "-json")
	require.True(t, errors.Is(err, errDiverged))
	var d bundle.DiffReport
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.NotNil(t, d.Divergence)
	require.Equal(t, events.Kind("llm.responded"), d.Divergence.Kind)
	require.Equal(t, uint64(4), d.Divergence.Seq)
	require.Len(t, d.Divergence.Chain, 4, "causal chain back to the root")
	require.NotNil(t, d.Output)
}

func TestMerge(t *testing.T) {
	full := oneRun("run-000", "x", t)
	head := full
	head.Events = full.Events[:3]
	first := write(t, "first"+bundle.FileExt, head)
	// A shard holding the tail alone would not verify (seqs start at 1), so
	// shards overlap: the second holds everything.
	second := write(t, "second"+bundle.FileExt, full)
	other := write(t, "other"+bundle.FileExt, oneRun("run-001", "y", t))
	out := filepath.Join(t.TempDir(), "merged.bundle")
	stdout, err := runCmd("merge", out, second, other, first)
	require.NoError(t, err, stdout)
	got, err := bundle.Config{}.Load(context.Background(), out)
	require.NoError(t, err)
	require.Len(t, got.Runs, 2)
	require.Equal(t, events.Chain(full.Events, 0), events.Chain(got.Runs[0].Events, 0))

	conflict := write(t, "conflict"+bundle.FileExt, oneRun("run-000", "y", t))
	_, err = runCmd("merge", filepath.Join(t.TempDir(), "m.bundle.zst"), first, second, conflict)
	require.ErrorIs(t, err, bundle.ErrConflict)
	// The hint compares the two copies, naming both bundles.
	require.ErrorContains(t, err, "compare them with: go run github.com/codegenie/codegenie/cmd/bundle diff "+first+" "+conflict+" -runs run-000,run-000")

	// Two copies whose events differ at one identity: the same hint.
	edited := full
	edited.Events = tape(t, "x")
	edited.Events[1] = tape(t, "z")[1] // another prompt at seq 2, same output and pins
	edited.Events[1].Payload = []byte(`{"user":"fix lodash!"}`)
	edited.Events[1].PayloadDigest = events.Sum(edited.Events[1].Payload)
	changed := write(t, "changed"+bundle.FileExt, edited)
	_, err = runCmd("merge", filepath.Join(t.TempDir(), "m.bundle.zst"), second, changed)
	require.ErrorIs(t, err, bundle.ErrConflict)
	require.ErrorContains(t, err, "seq 2 lane \"\"")
	require.ErrorContains(t, err, "compare them with: go run github.com/codegenie/codegenie/cmd/bundle diff "+second+" "+changed+" -runs run-000,run-000")
}

// pipelineFold stands for a pipeline's fold, which the command does not
// link: it counts events.
type pipelineFold struct {
	Applied int `json:"applied"`
}

func (f *pipelineFold) FoldName() string         { return "example/pipeline.State/1" }
func (f *pipelineFold) Apply(events.Event) error { f.Applied++; return nil }

// TestStateFoldsWithoutThePipeline: state prints the generic fold's state
// whatever fold the bundle's snapshot names. A snapshot of a fold the
// command does not link changes nothing but a note naming that fold and
// how to fold the run with it; a snapshot of the generic fold is checked,
// and one whose state was forged is refused.
func TestStateFoldsWithoutThePipeline(t *testing.T) {
	ctx := context.Background()
	r := oneRun("run-000", "+lodash 4.17.21", t)
	without := write(t, "plain"+bundle.FileExt, r)
	withSnapshot := func(name string, s *bundle.Snapshot) string {
		p := filepath.Join(t.TempDir(), name+bundle.FileExt)
		require.NoError(t, bundle.Config{}.WriteFile(ctx, p, &bundle.Bundle{Metadata: meta(), Runs: []bundle.Run{r}, Snapshot: s}))
		return p
	}
	pipelineSnap, err := r.Snapshot(2, &pipelineFold{})
	require.NoError(t, err)
	generic, err := bundle.Config{}.FoldTo(ctx, bundle.RunRef{Path: without}, 2)
	require.NoError(t, err)
	state, err := events.Canonical(generic)
	require.NoError(t, err)
	genericSnap := &bundle.Snapshot{Run: r.ID, At: 2, Records: 2, Chain: events.Chain(r.Events[:2], 0), Fold: generic.FoldName(), State: state}
	forged := *genericSnap
	forged.State = json.RawMessage(strings.Replace(string(state), `"count":1`, `"count":2`, 1))
	require.NotEqual(t, string(state), string(forged.State))

	tests := []struct {
		name    string
		path    string
		note    string // in stderr; "" for none
		refusal string // in the error; "" for success
	}{
		{"no snapshot", without, "", ""},
		{"a snapshot of a fold not linked", withSnapshot("pipeline", pipelineSnap),
			`bundle: state: the bundle's snapshot of run run-000 was made by fold example/pipeline.State/1, which this command does not link (it links no pipeline); the state above is the generic fold's. For that fold's state, call bundle.Config{}.FoldTo(ctx, bundle.RunRef{Path: `, ""},
		{"a snapshot of the generic fold", withSnapshot("generic", genericSnap), "", ""},
		{"a forged snapshot of the generic fold", withSnapshot("forged", &forged), "", "the snapshot was edited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, at := range []string{"1", "2", "4", "0"} {
				var out, errw bytes.Buffer
				err := run(ctx, []string{"state", tt.path, "-at", at}, strings.NewReader(""), &out, &errw)
				if tt.refusal != "" && at != "1" { // at 1 the fold stops before the snapshot's records
					require.ErrorContains(t, err, tt.refusal)
					require.ErrorContains(t, err, "digest mismatch")
					continue
				}
				require.NoError(t, err)
				plain, err := runCmd("state", without, "-at", at)
				require.NoError(t, err)
				require.Equal(t, plain, out.String(), "-at %s", at)
				require.Contains(t, out.String(), `"fold": "codegenie/bundle.kinds/1"`)
				if tt.note == "" {
					require.Empty(t, errw.String())
				} else {
					require.Contains(t, errw.String(), tt.note)
					require.Contains(t, errw.String(), "Run: \"run-000\"}, "+at+", yourFold) with the pipeline's Folder, from a test or a main of your module\n")
				}
			}
		})
	}
}

// TestMergeNeverReplacesWhatItDidNotWrite: merge refuses an OUT that is
// not a bundle, even with -force, and replaces a bundle only with -force.
func TestMergeNeverReplacesWhatItDidNotWrite(t *testing.T) {
	in := write(t, "in"+bundle.FileExt, oneRun("r", "x", t))
	folder := filepath.Join(t.TempDir(), "project")
	require.NoError(t, os.MkdirAll(filepath.Join(folder, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(folder, "src", "main.go"), []byte("package main\n"), 0o644))
	text := filepath.Join(t.TempDir(), "notes.zst")
	require.NoError(t, os.WriteFile(text, []byte("notes\n"), 0o644))
	for _, out := range []string{folder, text} {
		for _, args := range [][]string{{"merge", out, in}, {"merge", "-force", out, in}} {
			_, err := runCmd(args...)
			require.ErrorIs(t, err, bundle.ErrExists, "%v", args)
			require.Contains(t, err.Error(), "is not a bundle")
		}
	}
	b, err := os.ReadFile(filepath.Join(folder, "src", "main.go"))
	require.NoError(t, err)
	require.Equal(t, "package main\n", string(b))
	b, err = os.ReadFile(text)
	require.NoError(t, err)
	require.Equal(t, "notes\n", string(b))

	out := filepath.Join(t.TempDir(), "merged.bundle")
	_, err = runCmd("merge", out, in)
	require.NoError(t, err)
	_, err = runCmd("merge", out, in)
	require.ErrorIs(t, err, bundle.ErrExists)
	require.Contains(t, err.Error(), "-force")
	_, err = runCmd("merge", "-force", out, in)
	require.NoError(t, err)
}

// TestControlCharactersAreQuoted: kinds, lanes, payloads, run IDs, errors
// and metadata from a bundle never reach the terminal raw.
func TestControlCharactersAreQuoted(t *testing.T) {
	evil := "\x1b]0;owned\x07\x1b[2J"
	mk := func(id, completion string) bundle.Run {
		r := events.NewRecorder(events.Config{})
		_, err := r.Emit(events.Kind("run"+evil), map[string]string{"x": evil})
		require.NoError(t, err)
		_, err = r.Emit(events.Kind("step"+evil), []byte(completion+evil))
		require.NoError(t, err)
		return bundle.Run{ID: id, Pin: map[string]string{"k" + evil: evil}, Output: []byte(completion + evil), Error: "failed" + evil, Events: r.Events()}
	}
	m := meta()
	m.Scenario = "s" + evil
	write := func(name string, runs ...bundle.Run) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, bundle.Config{}.WriteFile(context.Background(), p, &bundle.Bundle{Metadata: m, Runs: runs}))
		return p
	}
	a, b := write("a"+bundle.FileExt, mk("a", "a")), write("b"+bundle.FileExt, mk("a", "b"))
	both := write("both"+bundle.FileExt, mk("a", "a"), mk("b", "b"))
	for _, args := range [][]string{
		{"verify", a}, {"show", a}, {"show", "-payload", a}, {"diff", a, b}, {"diff", both, "-runs", "a,b"},
		{"merge", filepath.Join(t.TempDir(), "m.bundle"), a, b},
	} {
		out, err := runCmd(args...)
		var stderr bytes.Buffer
		exitCode(err, &stderr)
		for _, s := range []string{out, stderr.String()} {
			require.NotContains(t, s, "\x1b", "%v", args)
			require.NotContains(t, s, "\x07", "%v", args)
		}
	}
}

// TestDiffNamesRuns: a diff that does not say which runs of a bundle of
// several to compare names -runs, the run IDs and a command that runs.
func TestDiffNamesRuns(t *testing.T) {
	many := write(t, "many"+bundle.FileExt, oneRun("run-000", "+lodash 4.17.21", t), oneRun("run-001", "+lodash 4.17.21", t))
	a := write(t, "a"+bundle.FileExt, oneRun("run-000", "+lodash 4.17.21", t))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", many, a}, "diff " + many + " " + a + " -runs run-000,run-000"},
		{[]string{"diff", a, many}, "diff " + a + " " + many + " -runs run-000,run-000"},
		{[]string{"diff", many, "-runs", "run-000,nope"}, "no run nope; the bundle holds run-000, run-001; for example: go run github.com/codegenie/codegenie/cmd/bundle diff " + many + " -runs run-000,run-001"},
		{[]string{"state", many}, "state " + many + " -run run-000"},
	} {
		_, err := runCmd(tt.args...)
		var stderr bytes.Buffer
		require.Equal(t, 1, exitCode(err, &stderr))
		require.Contains(t, stderr.String(), tt.want, "%v", tt.args)
		require.NotContains(t, stderr.String(), "runs.json")
		require.NotContains(t, stderr.String(), "missing file")
	}
}

// TestShowPayloadText: show prints a printable payload as its text: JSON
// keeps its own escapes, not escaped a second time; -payload prints a
// multi-line text whole, its lines indented; bytes that are not
// printable text are escaped.
func TestShowPayloadText(t *testing.T) {
	var evs []events.Event
	for i, p := range []string{`{"user":"fix \"lodash\" \\ now"}`, "line one\nline two", "bell\x07"} {
		evs = append(evs, events.Event{Seq: uint64(i + 1), Parent: uint64(i), Kind: "step", Payload: []byte(p), PayloadDigest: events.Sum([]byte(p))})
	}
	p := write(t, "p"+bundle.FileExt, bundle.Run{ID: "r", Events: evs})
	out, err := runCmd("show", p, "-payload")
	require.NoError(t, err)
	require.Contains(t, out, "\n    {\"user\":\"fix \\\"lodash\\\" \\\\ now\"}\n")
	require.Contains(t, out, "\n    line one\n    line two\n")
	require.Contains(t, out, "\n    bell\\x07\n")
	out, err = runCmd("show", p)
	require.NoError(t, err)
	require.Contains(t, out, "\n    {\"user\":\"fix \\\"lodash\\\" \\\\ now\"}\n")
	require.Contains(t, out, "\n    line one\\nline two\n", "one line without -payload")
}

// TestHelp: -h, alone or after a subcommand, lists every flag of every
// subcommand with its description, on stdout, exit status 0.
func TestHelp(t *testing.T) {
	all, err := runCmd("-h")
	require.NoError(t, err)
	for _, sub := range subcommands {
		one, err := runCmd(sub.name, "-h")
		require.NoError(t, err)
		require.Contains(t, all, one)
		fs := flag.NewFlagSet(sub.name, flag.ContinueOnError)
		sub.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			require.Contains(t, one, "  -"+f.Name, sub.name)
			_, usage := flag.UnquoteUsage(f)
			require.Contains(t, one, usage, sub.name)
		})
	}
	_, err = runCmd("diff", "-nope")
	var stderr bytes.Buffer
	require.Equal(t, 2, exitCode(err, &stderr))
	require.Contains(t, stderr.String(), "bundle: diff: flag provided but not defined: -nope\nusage: bundle diff A [B] [-runs X,Y] [-json]\n")
	require.Contains(t, stderr.String(), "  -runs X,Y\n")
}
