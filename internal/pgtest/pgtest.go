package pgtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoServer: the PostgreSQL server binaries were not found.
var ErrNoServer = errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin; install them (Debian: apt-get install postgresql-15)")

// Superuser is the name of the server's superuser.
const Superuser = "postgres"

// Config configures StartServer. The zero value is usable.
type Config struct {
	// User is the account the server runs as when the caller is root
	// (PostgreSQL refuses to run as root); "" means "nobody". Ignored when
	// the caller is not root.
	User string
	// BinDir holds initdb and postgres; "" means Find.
	BinDir string
}

// Server is a running throwaway PostgreSQL server.
type Server struct {
	// Dir is the temporary directory holding the data directory, the
	// unix socket and the server log.
	Dir  string
	Port int
	cmd  *exec.Cmd
	done chan error
}

// Find returns the directory holding initdb and postgres: the directory
// of initdb on PATH, else the highest version under /usr/lib/postgresql.
func Find() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Or(version(b)-version(a), cmp.Compare(a, b)) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoServer
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// StartServer creates a cluster in a new temporary directory and starts
// a server on a free loopback port with trust authentication, its unix
// socket in that directory. The caller must call Stop.
func StartServer(ctx context.Context, cfg Config) (*Server, error) {
	bin := cfg.BinDir
	if bin == "" {
		var err error
		if bin, err = Find(); err != nil {
			return nil, err
		}
	}
	cred, err := credential(cfg.User)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{Dir: dir}
	if err := s.init(ctx, bin, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		err := s.start(ctx, bin, cred)
		if err == nil {
			return s, nil
		}
		if attempt == 2 || ctx.Err() != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (s *Server) command(ctx context.Context, cred *runAs, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.Dir
	//detvet:ignore the server's tools are found on the test process's PATH
	cmd.Env = []string{"LC_ALL=C", "TZ=UTC", "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = sysProcAttr(cred)
	return cmd
}

func (s *Server) init(ctx context.Context, bin string, cred *runAs) error {
	if err := handTo(s.Dir, cred); err != nil {
		return err
	}
	cmd := s.command(ctx, cred, filepath.Join(bin, "initdb"), "-D", filepath.Join(s.Dir, "data"),
		"-U", Superuser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	var out []byte
	errc := make(chan error, 1)
	onThread(func() {
		var err error
		out, err = cmd.CombinedOutput()
		errc <- err
	})
	if err := <-errc; err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

// onThread runs f in a new goroutine locked to its thread until f
// returns. A process started with a parent-death signal (sysProcAttr)
// gets it when the thread that started it ends, not the test binary, and
// a goroutine that ends locked to its thread ends it (harness's child
// processes are started so): f starts a process, and waits for it, on a
// thread that lives as long as the process.
func onThread(f func()) {
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f()
	}()
}

func (s *Server) start(ctx context.Context, bin string, cred *runAs) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logPath := filepath.Join(s.Dir, "server.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer log.Close()
	// Not CommandContext: the server outlives StartServer's ctx.
	cmd := s.command(context.Background(), cred, filepath.Join(bin, "postgres"), "-D", filepath.Join(s.Dir, "data"),
		"-p", strconv.Itoa(port), "-k", s.Dir, "-c", "listen_addresses=127.0.0.1", "-F")
	cmd.Stdout, cmd.Stderr = log, log
	started, done := make(chan error, 1), make(chan error, 1)
	onThread(func() {
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	})
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.cmd, s.Port, s.done = cmd, port, done
	if err := s.waitReady(ctx); err != nil {
		s.halt()
		s.cmd = nil
		b, _ := os.ReadFile(logPath)
		return fmt.Errorf("pgtest: postgres on port %d: %w\n%s", port, err, b)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("exited: %v", err)
		default:
		}
		c, err := pgx.Connect(ctx, s.DSN(Superuser, "postgres"))
		if err == nil {
			return c.Close(ctx)
		}
		//detvet:ignore a readiness poll: a done context ends it at this poll or the next
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DSN returns the URL for database db as role user.
func (s *Server) DSN(user, db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, s.Port, db)
}

// Exec runs sql as the superuser in database db.
func (s *Server) Exec(ctx context.Context, db, sql string, args ...any) error {
	c, err := pgx.Connect(ctx, s.DSN(Superuser, db))
	if err != nil {
		return fmt.Errorf("pgtest: connect to %s: %w", db, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("pgtest: %s: %w", db, err)
	}
	return nil
}

// Stop shuts the server down (fast shutdown, then a kill after 30 s),
// waits for it and removes its directory.
func (s *Server) Stop() error {
	err := s.halt()
	if rerr := os.RemoveAll(s.Dir); rerr != nil {
		err = errors.Join(err, fmt.Errorf("pgtest: %w", rerr))
	}
	return err
}

// halt stops the server process and waits for it.
func (s *Server) halt() error {
	var err error
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		//detvet:ignore a shutdown: the server's exit, or a kill after 30 s and then its exit
		select {
		case err = <-s.done:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			err = <-s.done
		}
		s.done <- err
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			err = nil // a signalled server exits non-zero
		}
	}
	return err
}
