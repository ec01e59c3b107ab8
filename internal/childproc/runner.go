package childproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/codegenie/codegenie/internal/hint"
)

// Error is a run whose child process did not deliver a well-formed
// report (it crashed, hung past its time limit, or wrote garbage) or left
// a process it started running after it ended.
type Error struct {
	Run    int    // the run the child was making
	PID    int    // 0 when it never started
	Reason string // "crashed", "hung", "garbage", "leaked" or "start"
	Detail string // exit status, time limit, decoding error, ...
	Output string // the tail of the child's stdout and stderr
}

func (e *Error) Error() string {
	s := fmt.Sprintf("child process for run %d (pid %d) %s: %s", e.Run, e.PID, e.Reason, e.Detail)
	if e.Output != "" {
		s += "\nlast output of the child:\n" + e.Output
	}
	return s
}

// maxOutput bounds the tail of a child's output kept for its Error.
const maxOutput = 16 << 10

// Runner starts the child processes of one gate: the test binary, run
// again with -test.run anchored to the test.
type Runner struct {
	test     string // t.Name()
	scenario string
	exe      string
	wd       string // the test process's working directory
	root     string // the module root above wd ("" when none)
	tmp      func() string
	timeout  time.Duration
}

// NewRunner returns the runner of the children of the gate of scenario in
// test: each child runs in a new directory made by tempDir (t.TempDir) and
// is killed, with its process group, after timeout.
func NewRunner(test, scenario string, tempDir func() string, timeout time.Duration) (*Runner, error) {
	//detvet:ignore the children start in the test process's working directory
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("harness: child processes: %w", err)
	}
	root, _ := hint.RootOf(wd)
	return &Runner{test: test, scenario: scenario, exe: os.Args[0], wd: wd, root: root, tmp: tempDir, timeout: timeout}, nil
}

// Child is one run to make in a child process.
type Child struct {
	Run   int
	Procs int // its GOMAXPROCS
	Plan  Plan
	// Discover makes the child log the environment variables it reads
	// (go test's -test.testlogfile), which Run returns.
	Discover bool
}

// Run makes c in a new child process and reads its report into rep. With
// c.Discover it returns the environment variables the child read, sorted.
// A child that cannot deliver its report (or whose content rep.Check
// refuses) gives an *Error.
func (r *Runner) Run(ctx context.Context, c Child, rep Report) ([]string, error) {
	fail := func(e *Error) ([]string, error) {
		e.Run = c.Run
		return nil, e
	}
	base, err := os.MkdirTemp(r.tmp(), "child-")
	if err != nil {
		return fail(&Error{Reason: "start", Detail: err.Error()})
	}
	tctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	tmpl, spec, err := r.command(tctx, base, c)
	if err != nil {
		return fail(&Error{Reason: "start", Detail: err.Error()})
	}
	p := c.Plan
	out := &tailBuffer{max: maxOutput}
	// A Cmd starts once: each try (a UTS namespace refused, the linked
	// binary refused) starts a new one made from tmpl.
	path := tmpl.Path
	cmd, werr, left, err := runInGroup(out, markVar+"="+spec.Nonce, func(w *os.File) (*exec.Cmd, error) {
		mk := func(newUTS bool) *exec.Cmd {
			c := exec.CommandContext(tctx, path, tmpl.Args[1:]...)
			c.Dir, c.Env, c.Stdout, c.Stderr = tmpl.Dir, specEnv(tmpl.Env, spec, newUTS), w, w
			c.WaitDelay = time.Second
			c.Cancel = func() error { return killGroup(c) }
			return c
		}
		c, err := startChild(mk, p.cpus, p.umask, p.hostname != "" || p.domain != "")
		if err != nil && p.exe && errors.Is(err, fs.ErrPermission) {
			// The temporary directory does not allow executing (noexec):
			// the child runs the test binary where it is.
			exeRefused.note("the test binary could not be run from the temporary directory: " + err.Error())
			path = r.exe
			c, err = startChild(mk, p.cpus, p.umask, p.hostname != "" || p.domain != "")
		}
		return c, err
	})
	if p.exe {
		// The child has ended: its copy of the test binary goes now, not
		// with the test's temporary directory.
		os.Remove(tmpl.Path)
	}
	if p.home {
		// So do its copies of the SDK configuration.
		os.RemoveAll(homeDir(base))
	}
	if err != nil {
		return fail(&Error{Reason: "start", Detail: err.Error()})
	}
	pid := cmd.Process.Pid
	also := ""
	if left != nil {
		also = "; it also " + leftText(left)
	}
	rerr := readReport(spec.Out, maxReport, spec, rep)
	switch {
	case tctx.Err() != nil && rerr != nil:
		why := fmt.Sprintf("killed after %v (Config.ChildTimeout)", r.timeout)
		if ctx.Err() != nil {
			why = "killed: the gate stopped (time budget, fail-fast or cancellation)"
		}
		return fail(&Error{PID: pid, Reason: "hung", Detail: why + also, Output: out.String()})
	case rerr != nil && errors.Is(rerr, os.ErrNotExist):
		detail := "exited without a report"
		if werr != nil {
			detail = fmt.Sprintf("%v without a report", werr)
		}
		return fail(&Error{PID: pid, Reason: "crashed", Detail: detail + also, Output: out.String()})
	case rerr != nil:
		return fail(&Error{PID: pid, Reason: "garbage", Detail: rerr.Error() + also, Output: out.String()})
	}
	if err := rep.Check(); err != nil {
		return fail(&Error{PID: pid, Reason: "garbage", Detail: fmt.Sprintf("report %s: %v", spec.Out, err) + also, Output: out.String()})
	}
	if left != nil {
		return fail(&Error{PID: pid, Reason: "leaked", Detail: leftText(left), Output: out.String()})
	}
	var read []string
	if c.Discover {
		read = readTestLog(filepath.Join(base, "testlog.txt"))
	}
	return read, nil
}

// readTestLog returns the environment variables a test binary logged as
// read with -test.testlogfile ("getenv NAME" lines), sorted, once each.
func readTestLog(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	for sc.Scan() {
		if k, ok := strings.CutPrefix(sc.Text(), "getenv "); ok && k != "" {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
