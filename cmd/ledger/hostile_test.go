package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/ledger"
)

// sealedLedger writes entries to a new ledger file at path as a writer
// that skips Append's checks would: each sealed, chained and canonical,
// so that only the checks made where the ledger is read stand between an
// entry and a command.
func sealedLedger(t testing.TB, path string, entries ...ledger.Entry) {
	t.Helper()
	var lines []byte
	prev := ""
	for i, e := range entries {
		e.Schema, e.Seq, e.Prev = 1, uint64(i+1), prev
		e.RecordedAt = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		h, err := e.ComputeHash()
		require.NoError(t, err)
		e.Hash = h
		b, err := e.Canonical()
		require.NoError(t, err)
		lines = append(append(lines, b...), '\n')
		prev = h
	}
	require.NoError(t, os.WriteFile(path, lines, 0o644))
}

// treeSnapshot maps every file, folder and link under root (but skip) to
// its kind and content digest.
func treeSnapshot(t testing.TB, root, skip string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			snap[p] = "link " + target
			return err
		case d.IsDir():
			snap[p] = "dir"
		default:
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			h := sha256.New()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
			snap[p] = fmt.Sprintf("file %x", h.Sum(nil))
		}
		return nil
	}))
	return snap
}

// gateFlagTest is a test that takes -gate.results, as a gated test does,
// so that go test runs it to the end with whatever flags it was given.
const gateFlagTest = `package victim

import (
	"flag"
	"testing"
)

var _ = flag.String("gate.results", "", "")

func TestGate(t *testing.T) {}
`

// TestRerunHostileEntryChoosesNoFlag: ledger rerun, run from a module
// root, of a sealed entry whose package or test is a go test flag (or a
// name holding a newline, or a directory outside the module) refuses the
// entry by name when it reads it, runs nothing, and leaves every file in
// the test's temporary tree as it was; go test's evaluator refuses the
// same entries on its own.
func TestRerunHostileEntryChoosesNoFlag(t *testing.T) {
	tmp := t.TempDir()
	mod := filepath.Join(tmp, "mod")
	victim := filepath.Join(tmp, "victim")
	ledgers := filepath.Join(tmp, "ledgers")
	for _, d := range []string{mod, victim, ledgers} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	files := map[string]string{
		filepath.Join(mod, "go.mod"):       "module example.com/victim\n\ngo 1.26\n",
		filepath.Join(mod, "gate_test.go"): gateFlagTest,
		filepath.Join(victim, "keep.txt"):  "the user's file\n",
		filepath.Join(victim, "go.mod"):    "module example.com/outside\n\ngo 1.26\n",
		filepath.Join(victim, "x_test.go"): "package outside\n\nimport \"testing\"\n\nfunc TestGate(t *testing.T) { panic(\"ran code outside the module\") }\n",
	}
	for p, content := range files {
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	t.Setenv("CODEGENIE_LEDGER", "")

	tests := []struct {
		name, pkg, test, field string
	}{
		{"coverprofile as package", "-coverprofile=../victim/cover.out", "TestGate", "package"},
		{"absolute coverprofile as package", "-coverprofile=" + filepath.Join(victim, "abs.out"), "TestGate", "package"},
		{"output binary as package", "-o=../victim/test.bin", "TestGate", "package"},
		{"exec as package", "-exec=touch ../victim/exec", "TestGate", "package"},
		{"directory outside the module", "./../victim", "TestGate", "package"},
		{"test name holding a newline and a flag", ".", "TestGate\n-coverprofile=../victim/nl.out", "test"},
		{"test name that is a flag", ".", "-test.coverprofile=../victim/t.out", "test"},
		{"package holding a newline and a flag", ".\n-o=../victim/nl.bin", "TestGate", "package"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entry := ledger.Entry{Outcome: gate.Outcome{Scenario: "alpha", Verdict: "PASS", Test: tc.test, Package: tc.pkg}, Kind: "verdict"}
			path := filepath.Join(ledgers, strings.NewReplacer(" ", "-").Replace(tc.name)+".jsonl")
			sealedLedger(t, path, entry)
			before := treeSnapshot(t, tmp, ledgers)

			a := app{getenv: os.Getenv, now: testApp(nil).now, evaluator: goTestEvaluator, revision: testApp(nil).revision}
			code, stdout, stderr := invoke(t, a, "rerun", "-ledger", path, "-from", "1", "-dir", mod)
			require.Equal(t, before, treeSnapshot(t, tmp, ledgers), "rerun changed a file outside the ledger\n%s", stderr)
			require.Equal(t, 1, code, "%s\n%s", stdout, stderr)
			require.Contains(t, stderr, "line 1 (seq 1)")
			require.Contains(t, stderr, tc.field+` "`)
			require.NotContains(t, stderr, "rerunning")

			entry.Seq = 1
			_, err := goTestEvaluator(mod, io.Discard)(context.Background(), entry)
			require.ErrorContains(t, err, tc.field+` "`)

			require.Equal(t, before, treeSnapshot(t, tmp, ledgers), "the evaluator changed a file outside the ledger")
		})
	}
}
