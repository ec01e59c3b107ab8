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

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/replay"
)

// tape records a run of fallback's kinds whose completion is the given
// text.
func tape(t testing.TB, completion string) []events.Event {
	t.Helper()
	r := events.NewRecorder(events.Options{})
	for _, s := range []struct {
		kind    events.Kind
		payload any
	}{
		{fallback.KindRunStarted, map[string]string{"run_key_digest": "rk-1"}},
		{fallback.KindPromptBuilt, map[string]string{"user": "fix lodash"}},
		{fallback.KindLLMRequested, map[string]string{"request_digest": "d"}},
		{fallback.KindLLMResponded, map[string]string{"text": completion}},
		{fallback.KindTransformProduced, map[string]string{"diff": completion}},
	} {
		_, err := r.Emit(s.kind, s.payload)
		require.NoError(t, err)
	}
	return r.Events()
}

func meta() replay.Metadata {
	return replay.Metadata{Scenario: "lodash", GoVersion: "go1.26.8", ToolVersion: "test"}
}

func oneRun(id, completion string, t testing.TB) replay.Run {
	return replay.Run{ID: id, Pin: map[string]string{"run_key": "rk-1"}, Output: []byte(completion), Events: tape(t, completion)}
}

func write(t testing.TB, name string, runs ...replay.Run) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, replay.Options{}.WriteFile(context.Background(), p, &replay.Bundle{Metadata: meta(), Runs: runs}))
	return p
}

func runCmd(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &bytes.Buffer{})
	return out.String(), err
}

func TestCommands(t *testing.T) {
	a := write(t, "a"+replay.FileExt, oneRun("run-000", "+lodash 4.17.21", t))
	a2 := write(t, "a2"+replay.FileExt, oneRun("run-001", "+lodash 4.17.21", t))
	b := write(t, "b"+replay.FileExt, oneRun("run-002", "+lodash 4.17.20", t))
	many := write(t, "many"+replay.FileExt, oneRun("run-000", "+lodash 4.17.21", t), oneRun("run-001", "+lodash 4.17.21", t), oneRun("run-002", "+lodash 4.17.20", t))
	bad := filepath.Join(t.TempDir(), "bad"+replay.FileExt)
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
		{"diff runs of two bundles", []string{"diff", many, a, "-runs", "run-002,run-000"}, 1, "reproduce: go run github.com/codegenie/codegenie/cmd/replay diff"},
		{"diff json", []string{"diff", "-json", a, b}, 1, `"field": "Payload"`},
		{"diff needs runs", []string{"diff", many, a}, 1, "holds 3 runs (run-000, run-001, run-002): name one of them; for example: go run github.com/codegenie/codegenie/cmd/replay diff"},
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
				require.True(t, strings.HasPrefix(errb.String(), "replay: "), errb.String())
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
	p := write(t, "b"+replay.FileExt, r0, r1)
	out, err := runCmd("diff", p, "-runs", "run-000,run-001")
	require.ErrorIs(t, err, errDiverged)
	require.Contains(t, out, "the events do not diverge")
	require.Contains(t, out, "outputs differ at byte 0")
}

func TestDiffJSONIsTheReport(t *testing.T) {
	a := write(t, "a"+replay.FileExt, oneRun("r", "x", t))
	b := write(t, "b"+replay.FileExt, oneRun("r", "y", t))
	out, err := runCmd("diff", a, b, "-json")
	require.True(t, errors.Is(err, errDiverged))
	var d replay.DiffReport
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.NotNil(t, d.Divergence)
	require.Equal(t, fallback.KindLLMResponded, d.Divergence.Kind)
	require.Equal(t, uint64(4), d.Divergence.Seq)
	require.Len(t, d.Divergence.Chain, 4, "causal chain back to the root")
	require.NotNil(t, d.Output)
}

func TestMerge(t *testing.T) {
	full := oneRun("run-000", "x", t)
	head := full
	head.Events = full.Events[:3]
	first := write(t, "first"+replay.FileExt, head)
	// A shard holding the tail alone would not verify (seqs start at 1), so
	// shards overlap: the second holds everything.
	second := write(t, "second"+replay.FileExt, full)
	other := write(t, "other"+replay.FileExt, oneRun("run-001", "y", t))
	out := filepath.Join(t.TempDir(), "merged.bundle")
	stdout, err := runCmd("merge", out, second, other, first)
	require.NoError(t, err, stdout)
	got, err := replay.Options{}.Load(context.Background(), out)
	require.NoError(t, err)
	require.Len(t, got.Runs, 2)
	require.Equal(t, events.Chain(full.Events, 0), events.Chain(got.Runs[0].Events, 0))

	conflict := write(t, "conflict"+replay.FileExt, oneRun("run-000", "y", t))
	_, err = runCmd("merge", filepath.Join(t.TempDir(), "m.bundle.zst"), first, second, conflict)
	require.ErrorIs(t, err, replay.ErrConflict)
	// The hint compares the two copies, naming both bundles.
	require.ErrorContains(t, err, "compare them with: go run github.com/codegenie/codegenie/cmd/replay diff "+first+" "+conflict+" -runs run-000,run-000")

	// Two copies whose events differ at one identity: the same hint.
	edited := full
	edited.Events = tape(t, "x")
	edited.Events[1] = tape(t, "z")[1] // another prompt at seq 2, same output and pins
	edited.Events[1].Payload = []byte(`{"user":"fix lodash!"}`)
	edited.Events[1].PayloadDigest = events.Sum(edited.Events[1].Payload)
	changed := write(t, "changed"+replay.FileExt, edited)
	_, err = runCmd("merge", filepath.Join(t.TempDir(), "m.bundle.zst"), second, changed)
	require.ErrorIs(t, err, replay.ErrConflict)
	require.ErrorContains(t, err, "seq 2 lane \"\"")
	require.ErrorContains(t, err, "compare them with: go run github.com/codegenie/codegenie/cmd/replay diff "+second+" "+changed+" -runs run-000,run-000")
}

// TestStateChecksTheSnapshot: state from a bundle with a snapshot prints
// what it prints without one, and a snapshot whose state was forged is
// refused.
func TestStateChecksTheSnapshot(t *testing.T) {
	r := oneRun("run-000", "+lodash 4.17.21", t)
	snap, err := replay.MakeSnapshot(&r, 2, fallback.NewState())
	require.NoError(t, err)
	with := filepath.Join(t.TempDir(), "snap"+replay.FileExt)
	require.NoError(t, replay.Options{}.WriteFile(context.Background(), with, &replay.Bundle{Metadata: meta(), Runs: []replay.Run{r}, Snapshot: snap}))
	without := write(t, "plain"+replay.FileExt, r)
	for _, at := range []string{"1", "2", "4", "0"} {
		a, err := runCmd("state", with, "-at", at)
		require.NoError(t, err)
		b, err := runCmd("state", without, "-at", at)
		require.NoError(t, err)
		require.Equal(t, b, a, "-at %s", at)
	}
	out, err := runCmd("verify", with)
	require.NoError(t, err)
	require.Contains(t, out, "snapshot of run run-000 at seq 2")

	forged := *snap
	forged.State = json.RawMessage(`{"applied":2,"at":2}`)
	bad := filepath.Join(t.TempDir(), "forged"+replay.FileExt)
	require.NoError(t, replay.Options{}.WriteFile(context.Background(), bad, &replay.Bundle{Metadata: meta(), Runs: []replay.Run{r}, Snapshot: &forged}))
	_, err = runCmd("state", bad)
	require.ErrorContains(t, err, "digest mismatch")
	require.Contains(t, err.Error(), "the snapshot was edited")
}

// TestMergeNeverReplacesWhatItDidNotWrite: merge refuses an OUT that is
// not a bundle, even with -force, and replaces a bundle only with -force.
func TestMergeNeverReplacesWhatItDidNotWrite(t *testing.T) {
	in := write(t, "in"+replay.FileExt, oneRun("r", "x", t))
	folder := filepath.Join(t.TempDir(), "project")
	require.NoError(t, os.MkdirAll(filepath.Join(folder, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(folder, "src", "main.go"), []byte("package main\n"), 0o644))
	text := filepath.Join(t.TempDir(), "notes.zst")
	require.NoError(t, os.WriteFile(text, []byte("notes\n"), 0o644))
	for _, out := range []string{folder, text} {
		for _, args := range [][]string{{"merge", out, in}, {"merge", "-force", out, in}} {
			_, err := runCmd(args...)
			require.ErrorIs(t, err, replay.ErrExists, "%v", args)
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
	require.ErrorIs(t, err, replay.ErrExists)
	require.Contains(t, err.Error(), "-force")
	_, err = runCmd("merge", "-force", out, in)
	require.NoError(t, err)
}

// TestControlCharactersAreQuoted: kinds, lanes, payloads, run IDs, errors
// and metadata from a bundle never reach the terminal raw.
func TestControlCharactersAreQuoted(t *testing.T) {
	evil := "\x1b]0;owned\x07\x1b[2J"
	mk := func(id, completion string) replay.Run {
		r := events.NewRecorder(events.Options{})
		_, err := r.Emit(events.Kind("run"+evil), map[string]string{"x": evil})
		require.NoError(t, err)
		_, err = r.Emit(events.Kind("step"+evil), []byte(completion+evil))
		require.NoError(t, err)
		return replay.Run{ID: id, Pin: map[string]string{"k" + evil: evil}, Output: []byte(completion + evil), Error: "failed" + evil, Events: r.Events()}
	}
	m := meta()
	m.Scenario = "s" + evil
	write := func(name string, runs ...replay.Run) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, replay.Options{}.WriteFile(context.Background(), p, &replay.Bundle{Metadata: m, Runs: runs}))
		return p
	}
	a, b := write("a"+replay.FileExt, mk("a", "a")), write("b"+replay.FileExt, mk("a", "b"))
	both := write("both"+replay.FileExt, mk("a", "a"), mk("b", "b"))
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
	many := write(t, "many"+replay.FileExt, oneRun("run-000", "+lodash 4.17.21", t), oneRun("run-001", "+lodash 4.17.21", t))
	a := write(t, "a"+replay.FileExt, oneRun("run-000", "+lodash 4.17.21", t))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", many, a}, "diff " + many + " " + a + " -runs run-000,run-000"},
		{[]string{"diff", a, many}, "diff " + a + " " + many + " -runs run-000,run-000"},
		{[]string{"diff", many, "-runs", "run-000,nope"}, "no run nope; the bundle holds run-000, run-001; for example: go run github.com/codegenie/codegenie/cmd/replay diff " + many + " -runs run-000,run-001"},
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
	p := write(t, "p"+replay.FileExt, replay.Run{ID: "r", Events: evs})
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
	require.Contains(t, stderr.String(), "replay: diff: flag provided but not defined: -nope\nusage: replay diff A [B] [-runs X,Y] [-json]\n")
	require.Contains(t, stderr.String(), "  -runs X,Y\n")
}
