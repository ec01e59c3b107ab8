package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/ledger"
)

// testApp is the command with a fixed clock, no environment and the given
// evaluator.
func testApp(ev evaluateFunc) app {
	return app{
		getenv:    func(string) string { return "" },
		now:       func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) },
		evaluator: func(string, io.Writer) evaluateFunc { return ev },
		revision:  func(context.Context, string) string { return "rev-now" },
	}
}

// invoke runs the command and returns its exit status and output.
func invoke(t *testing.T, a app, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := a.run(context.Background(), args, &out, &errb)
	code := exitCode(err, &errb)
	return code, out.String(), errb.String()
}

// seed writes a ledger with one verdict entry per scenario.
func seed(t *testing.T, scenarios ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	s, err := ledger.Open(context.Background(), path)
	require.NoError(t, err)
	defer s.Close()
	for _, sc := range scenarios {
		_, err := s.Append(context.Background(), ledger.Entry{
			Outcome: gate.Outcome{Scenario: sc, Verdict: "PASS", Key: "k-" + sc, Components: map[string]string{"cassette_id": "c1"}, Test: "TestGate/" + sc, Package: "./properties"},
		})
		require.NoError(t, err)
	}
	return path
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"frob"}, `unknown command "frob"`},
		{"no ledger", []string{"verify"}, "give -ledger DSN or set CODEGENIE_LEDGER"},
		{"bad flag", []string{"verify", "-ledger", "x", "-nope"}, "flag provided but not defined"},
		{"rerun without from", []string{"rerun", "-ledger", "x"}, "give -from N"},
		{"rerun backwards", []string{"rerun", "-ledger", "x", "-from", "3", "-to", "2"}, "-to 2 is before -from 3"},
		{"retain without reason", []string{"retain", "-ledger", "x", "-before", "3"}, "give -before N and -reason TEXT"},
		{"install on a path", []string{"install", "-ledger", "x"}, "needs no install"},
		{"stray argument", []string{"flakes", "-ledger", "x", "extra"}, `unexpected argument "extra"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := invoke(t, testApp(nil), tc.args...)
			require.Equal(t, 2, code)
			require.Contains(t, stderr, "ledger: ")
			require.Contains(t, stderr, tc.want)
			require.Contains(t, stderr, "usage:")
		})
	}
}

func TestVerify(t *testing.T) {
	path := seed(t, "npm", "go", "pypi")
	code, out, _ := invoke(t, testApp(nil), "verify", "-ledger", path)
	require.Equal(t, 0, code)
	require.Contains(t, out, "3 entries, seq 1..3")
	require.Contains(t, out, "chain verifies")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(b, []byte(`"go"`), []byte(`"GO"`), 1), 0o644))
	code, out, stderr := invoke(t, testApp(nil), "verify", "-ledger", path)
	require.Equal(t, 1, code)
	require.Contains(t, out, "TAMPERED seq 2 (line 2)")
	require.Contains(t, stderr, "at seq [2]")

	code, out, _ = invoke(t, testApp(nil), "verify", "-json", "-ledger", path)
	require.Equal(t, 1, code)
	var rep ledger.VerifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, uint64(2), rep.Problems[0].Seq)

	code, _, stderr = invoke(t, testApp(nil), "verify", "-ledger", filepath.Join(t.TempDir(), "none.jsonl"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no ledger at")
}

func TestFlakes(t *testing.T) {
	path := seed(t, "npm", "go", "npm")
	code, out, _ := invoke(t, testApp(nil), "flakes", "-ledger", path)
	require.Equal(t, 0, code)
	require.Contains(t, out, "npm             2 (seq 1..3)")
	code, out, _ = invoke(t, testApp(nil), "flakes", "-ledger", path, "-since", "2", "-json")
	require.Equal(t, 0, code)
	var rep ledger.FlakeReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Flakes, 2)
	require.Equal(t, ledger.Tally{Verdict: "PASS", Count: 1, First: 3, Last: 3}, rep.Flakes[1].Verdicts[0])
}

func TestRerun(t *testing.T) {
	// npm is unchanged, go's output moved under the same key, pypi's key
	// moved because its cassette did.
	ev := func(_ context.Context, rec ledger.Entry) (ledger.Entry, error) {
		cur := ledger.Entry{Outcome: gate.Outcome{Key: rec.Key, Components: rec.Components, Verdict: "PASS"}}
		switch rec.Scenario {
		case "go":
			cur.OutputDigest = strings.Repeat("ab", 32)
		case "pypi":
			cur.Key, cur.Components = "k2", map[string]string{"cassette_id": "c2"}
		}
		return cur, nil
	}
	path := seed(t, "npm", "go", "pypi")
	report := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := invoke(t, testApp(ev), "rerun", "-ledger", path, "-from", "1", "-to", "3", "-strict", "-output", report)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, out, "seq 2 go: diverged (recorded PASS, now PASS): differs in [output_digest] [rerun entry 5]")
	require.Contains(t, out, "seq 3 pypi: not_comparable (recorded PASS, now PASS): key k-pypi -> k2, moved: [cassette_id]")
	require.Contains(t, stderr, "rerun diverged: 1 entr(ies) at seq [2]")

	var rf struct {
		Format string `json:"format"`
		ledger.RerunReport
	}
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rf))
	require.Equal(t, reportFormat, rf.Format)
	require.Len(t, rf.Items, 3)
	require.Equal(t, "diverged", rf.Items[1].Status)
	require.Equal(t, []string{"cassette_id"}, rf.Items[2].Moved)

	// The reruns were appended, nothing else changed, and the chain holds.
	code, out, _ = invoke(t, testApp(nil), "verify", "-ledger", path)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "6 entries")

	// Without -strict the same divergence exits 0.
	code, _, _ = invoke(t, testApp(ev), "rerun", "-ledger", path, "-from", "1", "-to", "3", "-output", report)
	require.Equal(t, 0, code)

	// rerun never replaces a file it did not write.
	other := filepath.Join(t.TempDir(), "notes.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"mine":1}`), 0o644))
	code, _, stderr = invoke(t, testApp(ev), "rerun", "-ledger", path, "-from", "1", "-output", other)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "is not a rerun report")
	b, err = os.ReadFile(other)
	require.NoError(t, err)
	require.Equal(t, `{"mine":1}`, string(b))
}

func TestRetain(t *testing.T) {
	path := seed(t, "a", "b", "c", "d")
	code, out, stderr := invoke(t, testApp(nil), "retain", "-ledger", path, "-before", "3", "-reason", "older than 90 days")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "dropped entries 1..2; recorded as admin entry 5\n", out)
	code, out, _ = invoke(t, testApp(nil), "verify", "-ledger", path)
	require.Equal(t, 0, code)
	require.Contains(t, out, "3 entries, seq 3..5")

	// A ledger that does not verify is not retained.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(b, []byte(`"c"`), []byte(`"x"`), 1), 0o644))
	code, _, stderr = invoke(t, testApp(nil), "retain", "-ledger", path, "-before", "4", "-reason", "r")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "retain refused")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, bytes.Replace(b, []byte(`"c"`), []byte(`"x"`), 1), after)
}

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "CODEGENIE_LEDGER=/l", "CODEGENIE_GATE_SHARD=0/2", "CODEGENIE_GATE_RESULTS=/r", "HOME=/h"})
	require.Equal(t, []string{"PATH=/bin", "HOME=/h"}, got)
}

func TestEvaluateNeedsTestAndPackage(t *testing.T) {
	g := goTestEvaluator(t.TempDir(), io.Discard)
	_, err := g(context.Background(), ledger.Entry{Outcome: gate.Outcome{Scenario: "npm"}, Seq: 4})
	require.ErrorContains(t, err, "entry 4 records no test and package")
	require.False(t, errors.Is(err, context.Canceled))
}

func TestRepair(t *testing.T) {
	path := seed(t, "npm")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema":1,"se`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	code, out, stderr := invoke(t, testApp(nil), "repair", "-ledger", path)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "dropped a torn last line of 15 bytes at byte ")
	code, out, _ = invoke(t, testApp(nil), "repair", "-ledger", path)
	require.Equal(t, 0, code)
	require.Equal(t, "nothing to repair: the ledger ends with a complete line\n", out)
	code, _, stderr = invoke(t, testApp(nil), "repair", "-ledger", "postgres://db/x")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "only the embedded store")
}

func TestTailIsStable(t *testing.T) {
	out := &tail{max: 64}
	io.WriteString(out, "--- FAIL: TestGate/alpha (0.01s)\n    gate_test.go:9: boom\nFAIL\nFAIL\texample.com/gated\t12.345s\n")
	require.Equal(t, "    gate_test.go:9: boom\nFAIL\nFAIL\texample.com/gated\tNs\n", out.String())
	whole := &tail{max: 1 << 10}
	io.WriteString(whole, "--- FAIL: TestGate/alpha (0.01s)\nok  \texample.com/other\t0.5s\n")
	require.Equal(t, "--- FAIL: TestGate/alpha (Ns)\nok  \texample.com/other\tNs\n", whole.String())
}
