//go:build linux

package pgtest_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"syscall"
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

// TestServerOutlivesTheStartingThread: the server keeps running when the
// thread of the goroutine that started it ends (as a goroutine that exits
// locked to its thread ends it, which harness's child processes do): the
// server's parent-death signal follows the thread that started it, so
// StartServer starts it from a thread of its own.
func TestServerOutlivesTheStartingThread(t *testing.T) {
	ctx := context.Background()
	if _, err := pgtest.Find(); err != nil && !pgtest.Required() {
		t.Skip(err)
	}
	var (
		srv *pgtest.Server
		err error
		tid int
	)
	// start runs StartServer on a thread that ends when start returns: it
	// stays locked to it. Go keeps the main thread instead, so on it
	// start holds it while another goroutine does the work.
	var start func()
	start = func() {
		runtime.LockOSThread()
		if syscall.Gettid() == syscall.Getpid() {
			done := make(chan struct{})
			go func() { defer close(done); start() }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		tid = syscall.Gettid()
		srv, err = pgtest.StartServer(ctx, pgtest.Config{})
	}
	done := make(chan struct{})
	go func() { defer close(done); start() }()
	<-done
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Stop()) }()
	task := "/proc/self/task/" + strconv.Itoa(tid)
	for _, err := os.Stat(task); err == nil; _, err = os.Stat(task) {
		runtime.Gosched() // the thread ends once its goroutine has returned
	}
	require.NoError(t, srv.Exec(ctx, "postgres", "SELECT 1"), "the server died with the thread that started it")
}
