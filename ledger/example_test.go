package ledger_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/ledger"
)

// tempLedger returns the path of a new embedded ledger and a cleanup.
func tempLedger() (string, func()) {
	dir, err := os.MkdirTemp("", "ledger-example-")
	if err != nil {
		panic(err)
	}
	return filepath.Join(dir, "ledger.jsonl"), func() { os.RemoveAll(dir) }
}

func ExampleOpen() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	s, err := ledger.Open(ctx, path) // a path: the embedded store
	if err != nil {
		panic(err)
	}
	defer s.Close()
	e, err := s.Append(ctx, ledger.Entry{
		Outcome: gate.Outcome{
			Scenario: "npm", Verdict: gate.Pass, Runs: 50,
			Key: "9f2c", Components: map[string]string{"cassette_id": "c1"},
			Test: "TestGate/npm", Package: "./properties",
		},
		Path: "fallback",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Seq, e.Prev == "", len(e.Hash))
	// Output: 1 true 64
}

func ExampleConfig_Open() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	fixed := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	s, err := ledger.Config{Now: fixed}.Open(ctx, path)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	e, _ := s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "go", Verdict: "PASS"}})
	fmt.Println(e.RecordedAt)
	// Output: 2026-03-01 12:00:00 +0000 UTC
}

func ExampleStore_Verify() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	s, _ := ledger.Open(ctx, path)
	defer s.Close()
	for _, v := range []gate.Verdict{gate.Pass, gate.Pass} {
		s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: v}})
	}
	rep, err := s.Verify(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Entries, rep.Head, rep.Err())
	// Output: 2 2 <nil>
}

func ExampleStore_Flakes() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	s, _ := ledger.Open(ctx, path)
	defer s.Close()
	for _, v := range []gate.Verdict{gate.Pass, gate.Nondeterministic, gate.Pass} {
		s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: v}})
	}
	rep, _ := s.Flakes(ctx, 0)
	rep.Text(os.Stdout)
	// Output:
	// SCENARIO  PATH  PASS          NONDETERMINISTIC  BROKEN
	// npm             2 (seq 1..3)  1 (seq 2..2)      0
}

func ExampleStore_Rerun() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	s, _ := ledger.Open(ctx, path)
	defer s.Close()
	s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: "PASS", Key: "k1"}})
	// Evaluate finds the same key but another verdict now.
	now := func(ctx context.Context, rec ledger.Entry) (ledger.Entry, error) {
		return ledger.Entry{Outcome: gate.Outcome{Key: rec.Key, Verdict: "NONDETERMINISTIC"}}, nil
	}
	rep, err := s.Rerun(ctx, ledger.RerunConfig{From: 1, To: 1, Evaluate: now})
	if err != nil {
		panic(err)
	}
	rep.Text(os.Stdout)
	fmt.Println(rep.Err())
	// Output:
	// seq 1 npm: diverged (recorded PASS, now NONDETERMINISTIC): differs in [verdict] [rerun entry 2]
	// 1 entries: 0 same, 1 diverged, 0 not comparable, 0 errors, 0 skipped
	// ledger: rerun diverged: 1 entr(ies) at seq [1]
}

func ExampleStore_Entries() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	s, _ := ledger.Open(ctx, path)
	defer s.Close()
	for _, sc := range []string{"npm", "go", "pypi"} {
		s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: sc, Verdict: "PASS"}})
	}
	s.Entries(ctx, 2, 3, func(e ledger.Entry) error {
		fmt.Println(e.Seq, e.Scenario)
		return nil
	})
	// Output:
	// 2 go
	// 3 pypi
}

func ExampleStore_Retain() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	s, _ := ledger.Open(ctx, path)
	defer s.Close()
	for range 4 {
		s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: "PASS"}})
	}
	a, err := s.Retain(ctx, 3, "keep the last two")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Seq, a.Kind, a.Admin.DroppedFrom, a.Admin.DroppedTo)
	rep, _ := s.Verify(ctx)
	fmt.Println(rep.First, rep.Head, rep.Err())
	// Output:
	// 5 admin 1 2
	// 3 5 <nil>
}

// A killed append leaves a torn last line, and appends are refused until
// Repair drops it (it is kept in the repair log beside the ledger).
func ExampleConfig_Repair() {
	ctx := context.Background()
	path, cleanup := tempLedger()
	defer cleanup()
	s, _ := ledger.Open(ctx, path)
	defer s.Close()
	s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: "PASS"}})
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"schema":1,"seq":2,"ki`)
	f.Close()
	_, err := s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: "PASS"}})
	fmt.Println(err != nil)
	rep, _ := ledger.Config{}.Repair(ctx, path)
	fmt.Println(rep.Action, rep.Bytes, rep.HeadSeq)
	e, _ := s.Append(ctx, ledger.Entry{Outcome: gate.Outcome{Scenario: "npm", Verdict: "PASS"}})
	fmt.Println(e.Seq)
	// Output:
	// true
	// dropped 23 1
	// 2
}
