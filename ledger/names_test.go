package ledger_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/ledger"
)

// storeRaw stores line, a sealed entry, after the head of the ledger at
// dsn as a writer that skips Append's checks would: appended to the
// embedded store's file, or inserted by the PostgreSQL app role.
func storeRaw(t *testing.T, b backend, dsn string, line []byte, seq uint64, prev, hash, kind, scenario string) {
	t.Helper()
	if b.name == "postgres" {
		require.NoError(t, pgExec(t, dsn, insertRow, int64(seq), prev, hash, kind, scenario, string(line)))
		return
	}
	appendRaw(t, dsn, append(line, '\n'))
}

// TestUnsafeNamesRefused: an entry whose package, test or evidence a
// command would read as a flag, or whose test is not a Go test's name, is
// refused by Append; sealed into either store by a writer that skips
// Append, it is refused where it is read, whatever its schema: Entries
// (and so Rerun, which evaluates nothing) stops naming its seq and the
// field, and Verify reports it.
func TestUnsafeNamesRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, field string
		edit        func(m map[string]any)
	}{
		{"package that is a flag", `package "-coverprofile=../x"`, func(m map[string]any) { m["package"] = "-coverprofile=../x" }},
		{"package outside the module", `package "./../x"`, func(m map[string]any) { m["package"] = "./../x" }},
		{"test that is a flag", `test "-test.outputdir=/x"`, func(m map[string]any) { m["test"] = "-test.outputdir=/x" }},
		{"test holding a newline", `test "TestGate\n-o=x"`, func(m map[string]any) { m["test"] = "TestGate\n-o=x" }},
		{"evidence that is a flag", `path "-o=x"`, func(m map[string]any) { m["evidence"] = "-o=x" }},
		{"newer schema with a package that is a flag", `package "-o=x"`, func(m map[string]any) { m["schema"], m["package"] = 2, "-o=x" }},
	}
	run := func(t *testing.T, b backend) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				dsn, _ := b.fresh(t)
				s := open(t, dsn, &clock{})
				first, err := s.Append(ctx, verdict("npm", ledger.Pass))
				require.NoError(t, err)

				fields := map[string]any{}
				raw, err := json.Marshal(verdict("npm", ledger.Pass))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(raw, &fields))
				tc.edit(fields)
				if fields["schema"] == nil || fields["schema"] == float64(0) {
					var e ledger.Entry
					raw, err := json.Marshal(fields)
					require.NoError(t, err)
					require.NoError(t, json.Unmarshal(raw, &e))
					_, err = s.Append(ctx, e)
					require.ErrorIs(t, err, ledger.ErrInvalidEntry)
					require.ErrorContains(t, err, tc.field)
					fields["schema"] = ledger.SchemaVersion
				}
				fields["recorded_at"] = epoch.Format("2006-01-02T15:04:05.999999Z07:00")
				msgs := map[string]json.RawMessage{}
				for k, v := range fields {
					msgs[k], err = json.Marshal(v)
					require.NoError(t, err)
				}
				line, hash, ok := sealRaw(msgs, 2, first.Hash)
				require.True(t, ok)
				storeRaw(t, b, dsn, line, 2, first.Hash, hash, "verdict", "npm")

				err = s.Entries(ctx, 0, 0, func(ledger.Entry) error { return nil })
				require.ErrorIs(t, err, ledger.ErrDamaged)
				require.ErrorContains(t, err, "seq 2")
				require.ErrorContains(t, err, tc.field)

				evaluated := 0
				_, err = s.Rerun(ctx, ledger.RerunConfig{From: 1, Evaluate: func(context.Context, ledger.Entry) (ledger.Entry, error) {
					evaluated++
					return ledger.Entry{}, nil
				}})
				require.ErrorContains(t, err, tc.field)
				require.Zero(t, evaluated)

				rep, err := s.Verify(ctx)
				require.NoError(t, err)
				require.ErrorIs(t, rep.Err(), ledger.ErrTampered)
				require.Equal(t, uint64(2), rep.Problems[0].Seq)
				require.Contains(t, rep.Problems[0].Message, tc.field)
			})
		}
	}
	t.Run("embedded", func(t *testing.T) { run(t, embeddedBackend()) })
	t.Run("postgres", func(t *testing.T) {
		b, _ := postgresBackend(t)
		run(t, b)
	})
}
