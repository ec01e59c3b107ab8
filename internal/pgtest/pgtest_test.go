//go:build linux

package pgtest_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/codegenie/codegenie/internal/pgtest"
)

// TestStartStop: the server answers queries as a non-root user, and Stop
// leaves no process, goroutine or directory behind.
func TestStartStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	if _, err := pgtest.Find(); err != nil && !pgtest.Required() {
		t.Skip(err)
	}
	srv, err := pgtest.StartServer(ctx, pgtest.Config{})
	require.NoError(t, err)
	c, err := pgx.Connect(ctx, srv.DSN(pgtest.Superuser, "postgres"))
	require.NoError(t, err)
	var user string
	require.NoError(t, c.QueryRow(ctx, "SELECT usename FROM pg_user WHERE usesuper LIMIT 1").Scan(&user))
	require.Equal(t, pgtest.Superuser, user)
	var pid int
	require.NoError(t, c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	proc := runtime.GOOS == "linux" // the backend is seen in /proc
	if proc {
		fi, err := os.Stat("/proc/" + strconv.Itoa(pid))
		require.NoError(t, err)
		if uid, ok := ownerUID(fi); ok && os.Geteuid() == 0 {
			require.NotEqual(t, uint32(0), uid, "the server runs as root")
		}
	}
	require.NoError(t, c.Close(ctx))
	require.NoError(t, srv.Stop())
	_, err = os.Stat(srv.Dir)
	require.ErrorIs(t, err, os.ErrNotExist)
	if proc {
		_, err = os.Stat("/proc/" + strconv.Itoa(pid))
		require.ErrorIs(t, err, os.ErrNotExist, "a backend outlived Stop")
	}
}
