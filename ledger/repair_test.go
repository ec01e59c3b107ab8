package ledger_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// appendRaw appends b to the file at path, as a writer cut short would.
func appendRaw(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestRepairDropsATornLine: after a torn line, Append is refused naming
// ledger repair; Repair drops the torn bytes only, logs them, and the
// ledger is appendable again with every complete entry kept.
func TestRepairDropsATornLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := embeddedBackend().fresh(t)
	s := open(t, dsn, &clock{})
	fill(t, s, 2)
	complete, err := os.ReadFile(dsn)
	require.NoError(t, err)
	torn := []byte(`{"schema":1,"seq":3,"ki`)
	appendRaw(t, dsn, torn)

	_, err = s.Append(ctx, verdict("npm", ledger.Pass))
	require.ErrorIs(t, err, ledger.ErrDamaged)
	require.ErrorContains(t, err, "run ledger repair")

	rep, err := ledger.Config{Now: (&clock{}).Now}.Repair(ctx, dsn)
	require.NoError(t, err)
	require.Equal(t, "dropped", rep.Action)
	require.Equal(t, int64(len(complete)), rep.Offset)
	require.Equal(t, torn, rep.Torn)
	require.Equal(t, uint64(2), rep.HeadSeq)
	after, err := os.ReadFile(dsn)
	require.NoError(t, err)
	require.Equal(t, complete, after)
	log, err := os.ReadFile(dsn + ".repairs")
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(log, []byte("\n")))
	require.Contains(t, string(log), `"action":"dropped"`)

	e, err := s.Append(ctx, verdict("npm", ledger.Pass))
	require.NoError(t, err)
	require.Equal(t, uint64(3), e.Seq)
	verifyOK(t, s)

	rep, err = ledger.Config{}.Repair(ctx, dsn)
	require.NoError(t, err)
	require.Equal(t, "none", rep.Action)
	log2, err := os.ReadFile(dsn + ".repairs")
	require.NoError(t, err)
	require.Equal(t, log, log2)
}

// TestRepairKeepsAWholeEntry: a last line cut only before its newline is a
// complete entry; Repair keeps it and adds the newline.
func TestRepairKeepsAWholeEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := embeddedBackend().fresh(t)
	s := open(t, dsn, &clock{})
	fill(t, s, 3)
	b, err := os.ReadFile(dsn)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dsn, b[:len(b)-1], 0o644))
	rep, err := ledger.Config{}.Repair(ctx, dsn)
	require.NoError(t, err)
	require.Equal(t, "completed", rep.Action)
	require.Equal(t, uint64(3), rep.HeadSeq)
	after, err := os.ReadFile(dsn)
	require.NoError(t, err)
	require.Equal(t, b, after)
	fill(t, s, 1)
	require.Equal(t, 4, verifyOK(t, s).Entries)
}

// TestKilledAppendsEndAppendable: appenders of large entries killed at
// varying moments leave a ledger that is appendable, after Repair when
// the kill tore a line, with every complete entry kept.
func TestKilledAppendsEndAppendable(t *testing.T) {
	t.Parallel()
	if path := os.Getenv("LEDGER_TEST_KILL"); path != "" {
		s, err := ledger.Open(context.Background(), path)
		require.NoError(t, err)
		e := verdict("big", ledger.Pass)
		e.Evidence = string(bytes.Repeat([]byte("e"), 900<<10))
		for {
			_, err := s.Append(context.Background(), e)
			require.NoError(t, err)
		}
	}
	ctx := context.Background()
	for i := range 4 {
		dsn, _ := embeddedBackend().fresh(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledAppendsEndAppendable$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LEDGER_TEST_KILL="+dsn)
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(150+40*i) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()

		b, err := os.ReadFile(dsn)
		if os.IsNotExist(err) {
			continue // killed before its first append
		}
		require.NoError(t, err)
		whole := bytes.Count(b, []byte("\n"))
		rep, err := ledger.Config{}.Repair(ctx, dsn)
		require.NoError(t, err, "kill %d", i)
		t.Logf("kill %d: %d complete entries, repair: %s %d bytes", i, whole, rep.Action, rep.Bytes)
		s := open(t, dsn, &clock{})
		e, err := s.Append(ctx, verdict("npm", ledger.Pass))
		require.NoError(t, err)
		kept := whole
		if rep.Action == "completed" {
			kept++
		}
		require.Equal(t, uint64(kept+1), e.Seq, "kill %d", i)
		require.Equal(t, kept+1, verifyOK(t, s).Entries)
	}
}

// TestRepairCompletesAnySealedEntry: a last line cut just before its
// newline is completed when it is an entry of any schema, sealed (its
// canonical bytes match its hash) and chained (the seq and prev after the
// line before, itself of any schema); any other torn line is dropped.
func TestRepairCompletesAnySealedEntry(t *testing.T) {
	t.Parallel()
	newer := func(extra string) map[string]json.RawMessage {
		return map[string]json.RawMessage{
			"schema": json.RawMessage(`3`), "kind": json.RawMessage(`"verdict"`), "scenario": json.RawMessage(`"npm"`),
			"verdict": json.RawMessage(`"QUARANTINED"`), "recorded_at": json.RawMessage(`"2026-03-01T12:00:00Z"`),
			"tags": json.RawMessage(`["` + extra + `"]`),
		}
	}
	current := func(string) map[string]json.RawMessage {
		return map[string]json.RawMessage{
			"schema": json.RawMessage(`1`), "kind": json.RawMessage(`"verdict"`), "scenario": json.RawMessage(`"npm"`),
			"verdict": json.RawMessage(`"PASS"`), "recorded_at": json.RawMessage(`"2026-03-01T12:00:00Z"`),
		}
	}
	tests := []struct {
		name     string
		fields   func(string) map[string]json.RawMessage
		prevNew  bool                     // the line before the torn one is of schema 3 too
		edit     func(line []byte) []byte // applied to the sealed line
		seq      uint64                   // the tail's seq; 0 means the head's + 1
		prevHash string                   // the tail's prev; "" means the head's hash
		want     string
	}{
		{name: "current schema", fields: current, want: "completed"},
		{name: "newer schema", fields: newer, want: "completed"},
		{name: "newer schema after a newer schema", fields: newer, prevNew: true, want: "completed"},
		{name: "current schema after a newer schema", fields: current, prevNew: true, want: "completed"},
		{name: "newer schema, content changed after sealing", fields: newer, want: "dropped",
			edit: func(l []byte) []byte {
				return bytes.Replace(l, []byte("QUARANTINED"), []byte("QUARANTINEX"), 1)
			}},
		{name: "current schema, content changed after sealing", fields: current, want: "dropped",
			edit: func(l []byte) []byte { return bytes.Replace(l, []byte(`"npm"`), []byte(`"npx"`), 1) }},
		{name: "newer schema, not canonical", fields: newer, want: "dropped",
			edit: func(l []byte) []byte { return bytes.Replace(l, []byte(`{"`), []byte(`{ "`), 1) }},
		{name: "newer schema, a seq too far", fields: newer, seq: 9, want: "dropped"},
		{name: "newer schema, chained to another entry", fields: newer, prevHash: strings.Repeat("ab", 32), want: "dropped"},
		{name: "newer schema, cut inside", fields: newer, want: "dropped",
			edit: func(l []byte) []byte { return l[:len(l)-2] }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, _ := embeddedBackend().fresh(t)
			s := open(t, dsn, &clock{})
			fill(t, s, 2)
			head := all(t, s)[1]
			headSeq, headHash := head.Seq, head.Hash
			if tc.prevNew {
				line, hash, ok := sealRaw(newer("before"), headSeq+1, headHash)
				require.True(t, ok)
				appendRaw(t, dsn, append(line, '\n'))
				headSeq, headHash = headSeq+1, hash
			}
			complete, err := os.ReadFile(dsn)
			require.NoError(t, err)
			seq, prev := cmp.Or(tc.seq, headSeq+1), cmp.Or(tc.prevHash, headHash)
			line, hash, ok := sealRaw(tc.fields("tail"), seq, prev)
			require.True(t, ok)
			if tc.edit != nil {
				line = tc.edit(line)
			}
			appendRaw(t, dsn, line) // no newline: cut just before it

			rep, err := ledger.Config{}.Repair(ctx, dsn)
			require.NoError(t, err)
			require.Equal(t, tc.want, rep.Action)
			after, err := os.ReadFile(dsn)
			require.NoError(t, err)
			if tc.want == "completed" {
				require.Equal(t, string(complete)+string(line)+"\n", string(after))
				require.Equal(t, seq, rep.HeadSeq)
				require.Equal(t, hash, rep.HeadHash)
				fill(t, s, 1)
				rep := verifyOK(t, s)
				require.Equal(t, seq+1, rep.Head)
			} else {
				require.Equal(t, string(complete), string(after))
				require.Equal(t, line, rep.Torn)
				require.Equal(t, headSeq, rep.HeadSeq)
			}
		})
	}
}
