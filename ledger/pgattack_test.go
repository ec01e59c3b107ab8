package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/internal/ledgerdb"
	"github.com/codegenie/codegenie/internal/pgtest"
	"github.com/codegenie/codegenie/ledger"
	"github.com/codegenie/codegenie/ledger/postgres"
)

// pgExec runs sql on a new connection as the role dsn names.
func pgExec(t *testing.T, dsn, sql string, args ...any) error {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql, args...)
	return err
}

// pgHead returns the head's seq and hash.
func pgHead(t *testing.T, dsn string) (int64, string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer c.Close(ctx)
	var seq int64
	var hash string
	require.NoError(t, c.QueryRow(ctx, "SELECT seq, hash FROM codegenie_ledger ORDER BY seq DESC LIMIT 1").Scan(&seq, &hash))
	return seq, hash
}

// forged is a well-formed body for seq after prev, sealed with its true
// hash (or hash, when given), as the app role could compute it.
func forged(t *testing.T, seq int64, prev, hash string) (body, sealedHash string) {
	t.Helper()
	e := verdict("forged", ledger.Pass)
	e.Schema, e.Seq, e.Prev, e.RecordedAt = ledger.SchemaVersion, uint64(seq), prev, epoch
	h, err := e.ComputeHash()
	require.NoError(t, err)
	e.Hash = h
	if hash != "" {
		e.Hash = hash
	}
	b, err := e.Canonical()
	require.NoError(t, err)
	return string(b), e.Hash
}

const insertRow = "INSERT INTO codegenie_ledger (seq, prev, hash, kind, scenario, recorded_at, body) VALUES ($1, $2, $3, $4, $5, now(), $6)"

// TestPostgresAppRoleCannotBreakTheChain: as the least-privileged role,
// no INSERT makes the next honest append fail or the chain unverifiable.
func TestPostgresAppRoleCannotBreakTheChain(t *testing.T) {
	t.Parallel()
	b, _ := postgresBackend(t)
	dsn, _ := b.fresh(t)
	s := open(t, dsn, &clock{})
	fill(t, s, 3)
	seq, head := pgHead(t, dsn)
	good, goodHash := forged(t, seq+1, head, "")
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(good), &v))
	hex := strings.Repeat("ab", 32)
	tests := []struct {
		name string
		args []any
		want string
	}{
		{"seq at max int64", []any{int64(1<<63 - 1), head, hex, "verdict", "forged", good}, "must be seq"},
		{"gap", []any{seq + 2, head, hex, "verdict", "forged", good}, "must be seq"},
		{"repeat of an earlier seq", []any{seq, head, hex, "verdict", "forged", good}, "must be seq"},
		{"wrong prev", []any{seq + 1, hex, goodHash, "verdict", "forged", good}, "must be seq"},
		{"empty prev", []any{seq + 1, "", goodHash, "verdict", "forged", good}, "must be seq"},
		{"garbage body", []any{seq + 1, head, hex, "verdict", "forged", "garbage"}, "is not JSON"},
		{"body not an object", []any{seq + 1, head, hex, "verdict", "forged", "[1,2]"}, "does not state"},
		{"hash not hex", []any{seq + 1, head, "x", "verdict", "forged", good}, "64 lowercase hex"},
		{"hash column differs from the body", []any{seq + 1, head, hex, "verdict", "forged", good}, "does not state"},
		{"kind column differs from the body", []any{seq + 1, head, goodHash, "admin", "forged", good}, "does not state"},
		{"scenario column differs from the body", []any{seq + 1, head, goodHash, "verdict", "npm", good}, "does not state"},
		{"body of another seq", []any{seq + 1, head, goodHash, "verdict", "forged", strings.Replace(good, fmt.Sprintf(`"seq":%d`, seq+1), `"seq":99`, 1)}, "does not state"},
		{"body too long", []any{seq + 1, head, goodHash, "verdict", "forged", good[:len(good)-1] + `,"x":"` + strings.Repeat("y", ledgerdb.MaxEntryBytes) + `"}`}, "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, pgExec(t, dsn, insertRow, tc.args...), tc.want)
			verifyOK(t, s)
		})
	}
	t.Run("the honest append still follows the head", func(t *testing.T) {
		e, err := s.Append(context.Background(), verdict("npm", ledger.Pass))
		require.NoError(t, err)
		require.Equal(t, uint64(seq+1), e.Seq)
		verifyOK(t, s)
	})

	// What the database cannot check: blake3 over the canonical bytes. A
	// well-formed row whose hash does not match its content is accepted;
	// Verify names it alone, and honest appends go on after it.
	t.Run("a well-formed row with a false hash is found at its seq", func(t *testing.T) {
		seq, head := pgHead(t, dsn)
		body, h := forged(t, seq+1, head, strings.Repeat("cd", 32))
		require.NoError(t, pgExec(t, dsn, insertRow, seq+1, head, h, "verdict", "forged", body))
		e, err := s.Append(context.Background(), verdict("npm", ledger.Pass))
		require.NoError(t, err)
		require.Equal(t, uint64(seq+2), e.Seq)
		require.Equal(t, []uint64{uint64(seq + 1)}, problemSeqs(t, s))
	})
}

// TestPostgresFirstRow: on an empty table only seq 1 with no prev goes in.
func TestPostgresFirstRow(t *testing.T) {
	t.Parallel()
	b, _ := postgresBackend(t)
	dsn, _ := b.fresh(t)
	body, h := forged(t, 2, "", "")
	require.ErrorContains(t, pgExec(t, dsn, insertRow, 2, "", h, "verdict", "forged", body), "the first entry must be seq 1")
	body, h = forged(t, 1, strings.Repeat("ab", 32), "")
	require.ErrorContains(t, pgExec(t, dsn, insertRow, 1, strings.Repeat("ab", 32), h, "verdict", "forged", body), "the first entry must be seq 1")
	s := open(t, dsn, &clock{})
	fill(t, s, 1)
	verifyOK(t, s)
}

// TestPostgresUpgrade: an install without the chain trigger (an older
// version's) is refused for appending, naming the command that upgrades
// it; running Install again upgrades it in place, keeping the entries.
func TestPostgresUpgrade(t *testing.T) {
	t.Parallel()
	b, srv := postgresBackend(t)
	dsn, _ := b.fresh(t)
	db := dsn[strings.LastIndexByte(dsn, '/')+1 : strings.IndexByte(dsn, '?')]
	owner := srv.DSN(pgtest.Superuser, db)
	s := open(t, dsn, &clock{})
	fill(t, s, 2)
	require.NoError(t, pgExec(t, owner, "DROP TRIGGER codegenie_ledger_chain ON codegenie_ledger"))
	old := open(t, dsn, &clock{})
	_, err := old.Append(context.Background(), verdict("npm", ledger.Pass))
	require.ErrorContains(t, err, "run ledger install")
	require.NoError(t, postgres.Install(context.Background(), owner))
	upgraded := open(t, dsn, &clock{})
	e, err := upgraded.Append(context.Background(), verdict("npm", ledger.Pass))
	require.NoError(t, err)
	require.Equal(t, uint64(3), e.Seq)
	verifyOK(t, upgraded)
}
