package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// TestWaitBoundsOf: every bound has its documented default, and a DSN
// parameter of the same name replaces it.
func TestWaitBoundsOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, dsn string
		want      waitBounds
	}{
		{"defaults", "postgres://ci@db/ledger", waitBounds{"30s", "60s", "10s"}},
		{"from the DSN", "postgres://ci@db/ledger?lock_timeout=5s&idle_in_transaction_session_timeout=0", waitBounds{"5s", "60s", "0"}},
		{"statement", "postgres://ci@db/ledger?sslmode=disable&statement_timeout=2min", waitBounds{"30s", "2min", "10s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(tc.dsn)
			require.NoError(t, err)
			require.Equal(t, tc.want, waitBoundsOf(cfg.ConnConfig.RuntimeParams))
		})
	}
}
