package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/hint"
)

// childError is a run whose child process did not deliver a well-formed
// report (it crashed, hung past its time limit, or wrote garbage) or left
// a process it started running after it ended.
type childError struct {
	Run    int    // the run the child was making
	PID    int    // 0 when it never started
	Reason string // "crashed", "hung", "garbage", "leaked" or "start"
	Detail string // exit status, time limit, decoding error, ...
	Output string // the tail of the child's stdout and stderr
}

func (e *childError) Error() string {
	s := fmt.Sprintf("child process for run %d (pid %d) %s: %s", e.Run, e.PID, e.Reason, e.Detail)
	if e.Output != "" {
		s += "\nlast output of the child:\n" + e.Output
	}
	return s
}

// maxChildReport bounds the report a child may write; maxChildOutput the
// tail of its output the harness keeps.
const (
	maxChildReport = 256 << 20
	maxChildOutput = 16 << 10
	childParallel  = 2
)

// childRunner starts child processes of the test binary for one Check.
type childRunner struct {
	test     string // t.Name()
	scenario string
	exe      string
	wd       string // the test process's working directory
	root     string // the module root above wd ("" when none)
	tmp      func() string
}

func newChildRunner(t testingT, scenario string) (*childRunner, error) {
	//detvet:ignore the children start in the test process's working directory
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("harness: child processes: %w", err)
	}
	root, _ := hint.RootOf(wd)
	return &childRunner{test: t.Name(), scenario: scenario, exe: os.Args[0], wd: wd, root: root, tmp: t.TempDir}, nil
}

// testingT is what a childRunner needs of a test.
type testingT interface {
	Name() string
	TempDir() string
}

// everyRun is every run of a gate made in child processes (ProcessPerRun):
// all of them, but run 0 when the cassettes record switch is on, for it
// records in the test process.
func everyRun(iterations int) map[int]bool {
	out := make(map[int]bool, iterations)
	for i := range iterations {
		out[i] = true
	}
	if f := flag.Lookup(cassettes.RecordFlag); f != nil && f.Value.String() != "" {
		delete(out, 0)
	}
	return out
}

// childBatch is the children of one gate, running in the background.
type childBatch struct {
	r      *childRunner
	rc     *resolved
	pl     *planner
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	stopped bool // results of children killed by stop are dropped
	drop    bool
	out     []*outcome
	plans   map[int]plan
}

// start launches the runs iters in child processes: the first alone, with
// the test log on, to discover the environment variables the scenario
// reads; then the others, childParallel at a time, with those variables
// set to other values.
func (r *childRunner) start(ctx context.Context, rc *resolved, iters map[int]bool) *childBatch {
	cctx, cancel := context.WithCancel(ctx)
	b := &childBatch{r: r, rc: rc, ctx: cctx, cancel: cancel, done: make(chan struct{}), plans: map[int]plan{}}
	host, why := hostnameSupport()
	b.pl = newPlanner(host, why, rc.configVar)
	b.pl.env = map[string]string{}
	runs := slices.Sorted(maps.Keys(iters))
	go func() {
		defer close(b.done)
		if len(runs) == 0 {
			return
		}
		o, read := r.run(cctx, rc, runs[0], b.plan(runs[0], 0), true)
		b.keep(o)
		for _, k := range read {
			switch {
			case ownVariable(k), childSets(k, rc.configVar):
			case rc.configVar(k):
				b.pl.envHeld = append(b.pl.envHeld, k)
			default:
				b.pl.envRead = append(b.pl.envRead, k)
				b.pl.env[k] = os.Getenv(k) //detvet:ignore the perturbation varies the values the test process has
			}
		}
		sem := make(chan struct{}, childParallel)
		var wg sync.WaitGroup
		for j, run := range runs[1:] {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				o, _ := r.run(cctx, rc, run, b.plan(run, j+1), false)
				b.keep(o)
			})
		}
		wg.Wait()
	}()
	return b
}

// plan returns the plan of child j, which makes run, and remembers it.
func (b *childBatch) plan(run, j int) plan {
	p := b.pl.full(j)
	b.mu.Lock()
	b.plans[run] = p
	b.mu.Unlock()
	return p
}

// keep records a child's outcome, unless it was killed by a stop that
// drops results.
func (b *childBatch) keep(o *outcome) {
	if o == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped && b.drop && o.errKind == errorKindChild {
		return
	}
	b.out = append(b.out, o)
}

// stop kills the children still running and starts no more. drop: their
// runs are not counted (fail-fast, cancellation); else they fail (budget).
func (b *childBatch) stop(drop bool) {
	b.mu.Lock()
	b.stopped, b.drop = true, drop
	b.mu.Unlock()
	b.cancel()
}

// wait waits for every child and returns their outcomes by run.
func (b *childBatch) wait() []*outcome {
	<-b.done
	b.cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	slices.SortFunc(b.out, func(x, y *outcome) int { return x.iter - y.iter })
	return b.out
}

// summary describes how the children were perturbed.
func (b *childBatch) summary() *ProcessSummary {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &ProcessSummary{Runs: len(b.out), Parent: observe(-1), EnvRead: b.pl.envRead, EnvHeld: b.pl.envHeld}
	s.NotVaried = append(s.NotVaried, b.pl.notes...)
	if why := umaskNote(); why != "" && len(b.pl.umasks) > 0 {
		s.NotVaried = append(s.NotVaried, "umask: "+why)
	}
	if why := exeRefused.get(); why != "" {
		s.NotVaried = append(s.NotVaried, "executable path: "+why)
	}
	if host, why := hostnameSupport(); !host && b.pl.hostname {
		s.NotVaried = append(s.NotVaried, "hostname and domain name: "+why)
	}
	if !groupsSupported {
		s.NotVaried = append(s.NotVaried, "processes a child starts: not found or killed when it ends (no process groups on "+runtime.GOOS+")")
	}
	return s
}

// run makes run iter in a new child process perturbed by p. With discover
// the child logs the environment variables it reads, which run returns.
// A child that cannot deliver its report becomes an outcome with a
// *childError; only a context already done gives nil (no run made).
func (r *childRunner) run(ctx context.Context, rc *resolved, iter int, p plan, discover bool) (*outcome, []string) {
	procs := rc.Procs[iter%len(rc.Procs)]
	o := &outcome{iter: iter, procs: procs}
	if ctx.Err() != nil {
		return nil, nil
	}
	fail := func(ce *childError) (*outcome, []string) {
		ce.Run = iter
		o.setErr(ce)
		o.proc = &Process{Run: iter, PID: ce.PID, GOMAXPROCS: procs, Env: p.env}
		return o, nil
	}
	base, err := os.MkdirTemp(r.tmp(), "child-")
	if err != nil {
		return fail(&childError{Reason: "start", Detail: err.Error()})
	}
	tctx, cancel := context.WithTimeout(ctx, rc.ChildTimeout)
	defer cancel()
	tmpl, spec, err := r.command(tctx, base, iter, procs, p, discover, rc)
	if err != nil {
		return fail(&childError{Reason: "start", Detail: err.Error()})
	}
	out := &tailBuffer{max: maxChildOutput}
	// A Cmd starts once: each try (a UTS namespace refused, the linked
	// binary refused) starts a new one made from tmpl.
	path := tmpl.Path
	cmd, werr, left, err := runInGroup(out, func(w *os.File) (*exec.Cmd, error) {
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
	if err != nil {
		return fail(&childError{Reason: "start", Detail: err.Error()})
	}
	pid := cmd.Process.Pid
	also := ""
	if left != nil {
		also = "; it also " + leftText(left)
	}
	rep, rerr := readChildReport(spec.Out, spec)
	switch {
	case tctx.Err() != nil && rerr != nil:
		why := fmt.Sprintf("killed after %v (Config.ChildTimeout)", rc.ChildTimeout)
		if ctx.Err() != nil {
			why = "killed: the gate stopped (time budget, fail-fast or cancellation)"
		}
		return fail(&childError{PID: pid, Reason: "hung", Detail: why + also, Output: out.String()})
	case rerr != nil && errors.Is(rerr, os.ErrNotExist):
		detail := "exited without a report"
		if werr != nil {
			detail = fmt.Sprintf("%v without a report", werr)
		}
		return fail(&childError{PID: pid, Reason: "crashed", Detail: detail + also, Output: out.String()})
	case rerr != nil:
		return fail(&childError{PID: pid, Reason: "garbage", Detail: rerr.Error() + also, Output: out.String()})
	}
	if err := fillFromReport(o, rep); err != nil {
		return fail(&childError{PID: pid, Reason: "garbage", Detail: err.Error() + also, Output: out.String()})
	}
	if left != nil {
		return fail(&childError{PID: pid, Reason: "leaked", Detail: leftText(left), Output: out.String()})
	}
	o.proc.Env = p.env
	var read []string
	if discover {
		read = readTestLog(filepath.Join(base, "testlog.txt"))
	}
	return o, read
}

// command builds the child's command (its Env without the spec, which
// startChild adds) and spec.
func (r *childRunner) command(ctx context.Context, base string, iter, procs int, p plan, discover bool, rc *resolved) (*exec.Cmd, *childSpec, error) {
	spec := &childSpec{
		Format: childSpecFormat, Test: r.test, Scenario: r.scenario, Run: iter, Procs: procs,
		Out: filepath.Join(base, "report.json"), Nonce: nonce(), Hostname: p.hostname, Domain: p.domain, UTS: utsNamespace(),
	}
	args := []string{"-test.run=" + runPattern(r.test), "-test.count=1", fmt.Sprintf("-test.timeout=%v", 2*rc.ChildTimeout+time.Minute)}
	if discover {
		args = append(args, "-test.testlogfile="+filepath.Join(base, "testlog.txt"))
	}
	if f := flag.Lookup("test.short"); f != nil && f.Value.String() == "true" {
		// The test takes the same branches as in the test process.
		args = append(args, "-test.short")
	}
	exe := r.exe
	if p.exe {
		var err error
		if exe, err = linkExecutable(base, r.exe); err != nil {
			return nil, nil, err
		}
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = r.wd
	if p.dir {
		d, err := linkedDir(base, r.root, r.wd)
		if err != nil {
			return nil, nil, err
		}
		cmd.Dir = d
	}
	env := childEnviron(procs)
	if p.tmp {
		tmp := filepath.Join(base, "tmp")
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return nil, nil, err
		}
		env = append(env, "TMPDIR="+tmp)
	} else if v, ok := os.LookupEnv("TMPDIR"); ok { //detvet:ignore a child keeps the test process's TMPDIR unless the plan varies it
		env = append(env, "TMPDIR="+v)
	}
	env = appendLocale(env, p)
	if p.home {
		h, err := freshHome(base)
		if err != nil {
			return nil, nil, err
		}
		env = append(env, h...)
	}
	if p.path {
		v, err := extraPath(base)
		if err != nil {
			return nil, nil, err
		}
		env = append(env, v)
	}
	for _, k := range slices.Sorted(maps.Keys(p.env)) {
		env = append(env, k+"="+p.env[k])
	}
	cmd.Env = append(env, "PWD="+cmd.Dir)
	return cmd, spec, nil
}

// childEnviron is the test process's environment without the variables
// the harness sets for each child, plus GOMAXPROCS.
func childEnviron(procs int) []string {
	var env []string
	//detvet:ignore a child inherits the test process's environment by design
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !ownVariable(k) {
			env = append(env, kv)
		}
	}
	return append(env, fmt.Sprintf("GOMAXPROCS=%d", procs))
}

// appendLocale adds TZ, LANG and LC_ALL: the plan's, else the test
// process's.
func appendLocale(env []string, p plan) []string {
	keep := func(k string) {
		//detvet:ignore a child keeps the test process's locale unless the plan varies it
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if p.tz != "" {
		env = append(env, "TZ="+p.tz)
	} else {
		keep("TZ")
	}
	if p.locale != "" {
		env = append(env, "LANG="+p.locale, "LC_ALL="+p.locale)
	} else {
		keep("LANG")
		keep("LC_ALL")
	}
	return env
}

// specEnv is env with the child spec; the hostname is asked for only when
// the child has its own UTS namespace.
func specEnv(env []string, spec *childSpec, newUTS bool) []string {
	s := *spec
	if !newUTS {
		s.Hostname, s.Domain = "", ""
	}
	js, _ := json.Marshal(s)
	return append(slices.Clip(env), childVar+"="+string(js))
}

// symlinkSupport says whether this process may make symbolic links, which
// the working-directory perturbation needs (Windows allows them only with
// a privilege or developer mode), and why not.
var symlinkSupport = sync.OnceValues(func() (bool, string) {
	dir, err := os.MkdirTemp("", "codegenie-link-")
	if err != nil {
		return false, "no temporary directory to try a symbolic link in: " + err.Error()
	}
	defer os.RemoveAll(dir)
	if err := os.Symlink(dir, filepath.Join(dir, "l")); err != nil {
		return false, "symbolic links cannot be made here: " + err.Error()
	}
	return true, ""
})

// linkedDir makes the child's working directory: base/m is a symbolic link
// to the module root (or to wd itself outside a module), and the child
// runs in the same package directory below it. Relative paths resolve as
// in the test process, while os.Getwd reports a different path.
func linkedDir(base, root, wd string) (string, error) {
	link := filepath.Join(base, "m")
	if root == "" {
		root = wd
	}
	if err := os.Symlink(root, link); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil {
		return "", err
	}
	return filepath.Join(link, rel), nil
}

func nonce() string {
	var b [16]byte
	//detvet:ignore a nonce that tells this child's report from a stale one; it is only compared, never printed or digested
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.ToValidUTF8(string(t.b), "\uFFFD")
	if t.cut {
		s = "[...]" + s
	}
	return s
}
