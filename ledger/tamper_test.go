package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/pgtest"
	"github.com/codegenie/codegenie/ledger"
)

// fill appends n PASS verdicts for scenario npm.
func fill(t *testing.T, s *ledger.Store, n int) {
	t.Helper()
	for range n {
		_, err := s.Append(context.Background(), verdict("npm", ledger.Pass))
		require.NoError(t, err)
	}
}

func problemSeqs(t *testing.T, s *ledger.Store) []uint64 {
	t.Helper()
	rep, err := s.Verify(context.Background())
	require.NoError(t, err)
	require.ErrorIs(t, rep.Err(), ledger.ErrTampered)
	var seqs []uint64
	for _, p := range rep.Problems {
		seqs = append(seqs, p.Seq)
	}
	return seqs
}

// TestTamperEmbedded edits the embedded store's file behind its back;
// Verify must name the right seq.
func TestTamperEmbedded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(lines [][]byte) [][]byte
		want []uint64
	}{
		{"flipped byte in a value", func(l [][]byte) [][]byte {
			i := bytes.Index(l[2], []byte(`"npm"`))
			l[2][i+1] ^= 0x01 // npm -> opm
			return l
		}, []uint64{3}},
		{"flipped byte in the syntax", func(l [][]byte) [][]byte {
			l[2][0] ^= 0x01
			return l
		}, []uint64{3}},
		{"flipped digit of the seq", func(l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte(`"seq":3`), []byte(`"seq":2`), 1)
			return l
		}, []uint64{3, 3}},
		{"verdict rewritten and rehashed", func(l [][]byte) [][]byte {
			l[2] = rehash(t, bytes.Replace(l[2], []byte(`"PASS"`), []byte(`"BROKEN"`), 1))
			return l
		}, []uint64{4}},
		{"entry removed", func(l [][]byte) [][]byte {
			return append(l[:2:2], l[3:]...)
		}, []uint64{4, 4}},
		{"first entries removed without a retention", func(l [][]byte) [][]byte {
			return l[2:]
		}, []uint64{3}},
		{"entries swapped", func(l [][]byte) [][]byte {
			l[1], l[2] = l[2], l[1]
			return l
		}, []uint64{3, 3, 2, 2, 4, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dsn, _ := embeddedBackend().fresh(t)
			s := open(t, dsn, &clock{})
			fill(t, s, 5)
			verifyOK(t, s)
			b, err := os.ReadFile(dsn)
			require.NoError(t, err)
			lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
			lines = tc.edit(lines)
			require.NoError(t, os.WriteFile(dsn, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644))
			require.Equal(t, tc.want, problemSeqs(t, s))
		})
	}
}

// rehash recomputes an edited entry's hash, as a forger would.
func rehash(t *testing.T, line []byte) []byte {
	var e ledger.Entry
	require.NoError(t, json.Unmarshal(line, &e))
	h, err := e.ComputeHash()
	require.NoError(t, err)
	e.Hash = h
	b, err := e.Canonical()
	require.NoError(t, err)
	return b
}

// TestEmbeddedRefusesToAppendAfterATornLine: a crash mid-append leaves a
// line without its newline; appending after it would hide the damage.
func TestEmbeddedRefusesToAppendAfterATornLine(t *testing.T) {
	t.Parallel()
	dsn, _ := embeddedBackend().fresh(t)
	s := open(t, dsn, &clock{})
	fill(t, s, 2)
	f, err := os.OpenFile(dsn, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema":1,"seq":3,"ki`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	s2 := open(t, dsn, &clock{})
	_, err = s2.Append(context.Background(), verdict("npm", ledger.Pass))
	require.ErrorIs(t, err, ledger.ErrDamaged)
	require.Equal(t, []uint64{3}, problemSeqs(t, s2))
}

// TestTamperPostgres: the database refuses edits through the application
// role and, through its triggers, even from the owner; an edit made by a
// superuser with the triggers disabled is found by Verify.
func TestTamperPostgres(t *testing.T) {
	t.Parallel()
	b, srv := postgresBackend(t)
	ctx := context.Background()
	dsn, adminDSN := b.fresh(t)
	s := open(t, dsn, &clock{})
	fill(t, s, 5)
	db := dsn[strings.LastIndexByte(dsn, '/')+1 : strings.IndexByte(dsn, '?')]

	exec := func(t *testing.T, dsn, sql string) error {
		c, err := pgx.Connect(ctx, dsn)
		require.NoError(t, err)
		defer c.Close(ctx)
		_, err = c.Exec(ctx, sql)
		return err
	}
	for _, sql := range []string{
		"UPDATE codegenie_ledger SET body = replace(body, 'PASS', 'BROKEN') WHERE seq = 3",
		"DELETE FROM codegenie_ledger WHERE seq = 3",
		"TRUNCATE codegenie_ledger",
		"CALL codegenie_ledger_retain(3, 6, '', '', now(), '{}')",
	} {
		t.Run("app role: "+sql, func(t *testing.T) {
			require.ErrorContains(t, exec(t, dsn, sql), "permission denied")
		})
	}
	owner := srv.DSN(pgtest.Superuser, db)
	for _, sql := range []string{
		"UPDATE codegenie_ledger SET body = replace(body, 'PASS', 'BROKEN') WHERE seq = 3",
		"DELETE FROM codegenie_ledger WHERE seq = 3",
		"TRUNCATE codegenie_ledger",
	} {
		t.Run("owner with triggers: "+sql, func(t *testing.T) {
			require.ErrorContains(t, exec(t, owner, sql), "append-only")
		})
	}
	t.Run("admin role may not insert past the procedure", func(t *testing.T) {
		require.ErrorContains(t, exec(t, adminDSN, "INSERT INTO codegenie_ledger VALUES (6, '', 'x', 'admin', '', now(), '{}')"), "permission denied")
	})
	t.Run("the retention procedure checks what it inserts", func(t *testing.T) {
		err := exec(t, adminDSN, "CALL codegenie_ledger_retain(3, 9, 'x', 'y', now(), '{\"kind\":\"admin\"}')")
		require.ErrorContains(t, err, "must follow the head")
		var head string
		c, err := pgx.Connect(ctx, adminDSN)
		require.NoError(t, err)
		require.NoError(t, c.QueryRow(ctx, "SELECT hash FROM codegenie_ledger WHERE seq = 5").Scan(&head))
		require.NoError(t, c.Close(ctx))
		err = exec(t, adminDSN, "CALL codegenie_ledger_retain(3, 6, '"+head+"', 'y', now(), '{\"kind\":\"verdict\"}')")
		require.ErrorContains(t, err, "does not record this retention")
	})
	verifyOK(t, s)

	t.Run("superuser edit with triggers disabled", func(t *testing.T) {
		require.NoError(t, exec(t, owner, `ALTER TABLE codegenie_ledger DISABLE TRIGGER USER;
			UPDATE codegenie_ledger SET body = replace(body, '"PASS"', '"BROKEN"') WHERE seq = 3;
			ALTER TABLE codegenie_ledger ENABLE TRIGGER USER`))
		require.Equal(t, []uint64{3}, problemSeqs(t, s))
	})
	t.Run("superuser delete with triggers disabled", func(t *testing.T) {
		require.NoError(t, exec(t, owner, `ALTER TABLE codegenie_ledger DISABLE TRIGGER USER;
			DELETE FROM codegenie_ledger WHERE seq = 4;
			ALTER TABLE codegenie_ledger ENABLE TRIGGER USER`))
		require.Equal(t, []uint64{3, 5, 5}, problemSeqs(t, s))
	})
}

// TestEmbeddedEveryFlippedByteIsFound flips one bit of each byte of one
// entry in turn (bit i%8 of byte i):
// Verify always fails, first at that entry's seq, and names no entry
// before it and none after the next (whose prev may name the damage).
func TestEmbeddedEveryFlippedByteIsFound(t *testing.T) {
	t.Parallel()
	dsn, _ := embeddedBackend().fresh(t)
	s := open(t, dsn, &clock{})
	fill(t, s, 5)
	orig, err := os.ReadFile(dsn)
	require.NoError(t, err)
	lines := bytes.SplitAfter(orig, []byte("\n"))
	start := len(lines[0]) + len(lines[1])
	for i := start; i < start+len(lines[2])-1; i++ { // not the newline itself
		bit := (i - start) % 8
		b := bytes.Clone(orig)
		b[i] ^= 1 << bit
		require.NoError(t, os.WriteFile(dsn, b, 0o644))
		seqs := problemSeqs(t, s)
		require.Equal(t, uint64(3), seqs[0], "byte %d bit %d: %v", i-start, bit, seqs)
		require.LessOrEqual(t, seqs[len(seqs)-1], uint64(4), "byte %d bit %d: %v", i-start, bit, seqs)
	}
}
