package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/replay"
)

func tape(t testing.TB, completion string) []events.Event {
	t.Helper()
	r := events.NewRecorder(events.Options{})
	root, err := r.EmitAfter(0, kindStarted, map[string]string{"run_key": "rk-1"})
	require.NoError(t, err)
	p, err := r.EmitAfter(root, kindBuilt, map[string]string{"prompt": "fix lodash"})
	require.NoError(t, err)
	q, err := r.EmitAfter(p, kindRequested, map[string]string{"model": "m"})
	require.NoError(t, err)
	s, err := r.EmitAfter(q, kindResponded, map[string]string{"completion": completion})
	require.NoError(t, err)
	_, err = r.EmitAfter(s, kindProduced, map[string]string{"diff": completion})
	require.NoError(t, err)
	return r.Events()
}

func meta() replay.Metadata {
	return replay.Metadata{Pin: replay.Pin{RunKey: "rk-1"}, Scenario: "lodash", GoVersion: "go1.26.8", ToolVersion: "test", Status: replay.StatusCaptured}
}

func write(t testing.TB, name string, evs []events.Event) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, replay.WriteFile(context.Background(), p, &replay.Bundle{Metadata: meta(), Events: evs}))
	return p
}

func runCmd(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	return out.String(), err
}

func TestCommands(t *testing.T) {
	a := write(t, "a"+replay.FileExt, tape(t, "+lodash 4.17.21"))
	a2 := write(t, "a2"+replay.FileExt, tape(t, "+lodash 4.17.21"))
	b := write(t, "b"+replay.FileExt, tape(t, "+lodash 4.17.20"))
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
		{"verify ok", []string{"verify", a, b}, 0, "5 events"},
		{"verify invalid", []string{"verify", bad}, 1, ""},
		{"show range", []string{"show", a, "-from", "2", "-to", "3"}, 0, "seq 3 parent 2 llm.requested"},
		{"state", []string{"state", a, "-at", "2"}, 0, `"prompt": "fix lodash"`},
		{"state past end", []string{"state", a, "-at", "9"}, 1, ""},
		{"diff identical", []string{"diff", a, a2}, 0, "no divergence"},
		{"diff divergent", []string{"diff", a, b}, 1, "first divergent event: index 3, kind llm.responded"},
		{"diff json", []string{"diff", "-json", a, b}, 1, `"field": "Payload"`},
		{"no subcommand", nil, 2, ""},
		{"unknown subcommand", []string{"frobnicate"}, 2, ""},
		{"diff one arg", []string{"diff", a}, 2, ""},
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
			require.Contains(t, out, tc.contains)
		})
	}
}

func TestDiffJSONIsTheReport(t *testing.T) {
	a := write(t, "a"+replay.FileExt, tape(t, "x"))
	b := write(t, "b"+replay.FileExt, tape(t, "y"))
	out, err := runCmd("diff", a, b, "-json")
	require.True(t, errors.Is(err, errDiverged))
	var d replay.DiffReport
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.NotNil(t, d.Divergence)
	require.Equal(t, kindResponded, d.Divergence.Kind)
	require.Equal(t, uint64(4), d.Divergence.Seq)
	require.Len(t, d.Divergence.Chain, 4, "causal chain back to the root")
}

func TestMerge(t *testing.T) {
	full := tape(t, "x")
	first := write(t, "first"+replay.FileExt, full[:3])
	// A shard holding the tail alone would not verify (seqs start at 1), so
	// shards overlap: the second holds everything.
	second := write(t, "second"+replay.FileExt, full)
	out := filepath.Join(t.TempDir(), "merged.bundle")
	stdout, err := runCmd("merge", out, second, first)
	require.NoError(t, err, stdout)
	got, err := replay.Load(context.Background(), out)
	require.NoError(t, err)
	require.Equal(t, events.Chain(full), events.Chain(got.Events))

	conflict := write(t, "conflict"+replay.FileExt, tape(t, "y"))
	_, err = runCmd("merge", filepath.Join(t.TempDir(), "m.bundle.zst"), first, second, conflict)
	require.ErrorIs(t, err, replay.ErrConflict)
}

// TestStateUsesSnapshot: state from a bundle with a snapshot (partial
// replay) prints what a full replay prints.
func TestStateUsesSnapshot(t *testing.T) {
	evs := tape(t, "+lodash 4.17.21")
	snap, err := replay.MakeSnapshot(evs, 2)
	require.NoError(t, err)
	with := filepath.Join(t.TempDir(), "snap"+replay.FileExt)
	require.NoError(t, replay.WriteFile(context.Background(), with, &replay.Bundle{Metadata: meta(), Events: evs, Snapshot: snap}))
	without := write(t, "plain"+replay.FileExt, evs)
	for _, at := range []string{"1", "2", "4", "0"} {
		a, err := runCmd("state", with, "-at", at)
		require.NoError(t, err)
		b, err := runCmd("state", without, "-at", at)
		require.NoError(t, err)
		require.Equal(t, b, a, "-at %s", at)
	}
	out, err := runCmd("verify", with)
	require.NoError(t, err)
	require.Contains(t, out, "snapshot at seq 2")
}

// TestMergeNeverReplacesWhatItDidNotWrite: merge refuses an OUT that is
// not a bundle, even with -force, and replaces a bundle only with -force.
func TestMergeNeverReplacesWhatItDidNotWrite(t *testing.T) {
	in := write(t, "in"+replay.FileExt, tape(t, "x"))
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

// TestControlCharactersAreQuoted: kinds, lanes, payloads and metadata from a
// bundle never reach the terminal raw.
func TestControlCharactersAreQuoted(t *testing.T) {
	evil := "\x1b]0;owned\x07\x1b[2J"
	mk := func(completion string) []events.Event {
		r := events.NewRecorder(events.Options{})
		_, err := r.Emit(events.Kind("run"+evil), map[string]string{"x": evil})
		require.NoError(t, err)
		_, err = r.Emit(events.Kind("step"+evil), []byte(completion+evil))
		require.NoError(t, err)
		return r.Events()
	}
	m := meta()
	m.Pin.RunKey, m.Scenario, m.Run = "rk"+evil, "s"+evil, "r"+evil
	write := func(name string, evs []events.Event) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, replay.WriteFile(context.Background(), p, &replay.Bundle{Metadata: m, Events: evs}))
		return p
	}
	a, b := write("a"+replay.FileExt, mk("a")), write("b"+replay.FileExt, mk("b"))
	for _, args := range [][]string{
		{"verify", a}, {"show", a}, {"show", "-payload", a}, {"state", a},
		{"diff", a, b}, {"merge", filepath.Join(t.TempDir(), "m.bundle"), a, b},
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
