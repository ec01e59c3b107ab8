package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
)

// crashWatch keeps, while a gate makes its runs in the test process under
// -gate.results, a result of verdict gate.Crashed in the results folder that
// says which run is in progress, and sends the process's fatal error
// report (runtime/debug.SetCrashOutput) to a file beside it. A panic in a
// goroutine the scenario started, os.Exit, running out of memory or a
// signal ends the process with no chance to write anything then: what
// was written before stays. The in-progress result is rewritten in place,
// one write at offset 0 a run, never shorter than before (padded with
// spaces, which JSON allows after a value), without fsync: a dead process
// loses nothing the kernel holds, and a file is never seen half
// rewritten. (A write to a new file and a rename, the atomic way, costs
// milliseconds a run on ext4, which flushes a file renamed over another.)
type crashWatch struct {
	dir  string
	rep  *Report
	res  gate.Result
	path string   // the result file
	f    *os.File // the result file, open while the gate runs
	size int      // the longest content written to f
	made map[int]bool
	err  error
}

// crashOutput is the crash watch whose file the process's fatal error
// report goes to: there is one such file per process, and gates run one
// at a time, but one may start while the last one finishes.
var crashOutput struct {
	sync.Mutex
	owner *crashWatch
}

// newCrashWatch returns the crash watch of rep's gate, writing into the
// results folder dir. Nothing is written before its first run.
func newCrashWatch(dir string, rep *Report) *crashWatch {
	res := gate.Result{Shard: rep.Shard, Outcome: gate.Outcome{
		Scenario: rep.Scenario, Test: rep.Test, Package: rep.Package, ImportPath: rep.ImportPath,
		Verdict: gate.Crashed, Iterations: rep.Iterations, Floor: rep.Floor,
	}}
	if res.Test != "" && res.Package != "" {
		res.Commands = []gate.Command{gate.Command(hint.GoTestOf(hint.PurposeReproduce, res.Package, res.Test, hint.IsBenchmark(res.Test)))}
	}
	path := res.Path(dir)
	res.CrashOutput = strings.TrimSuffix(path, ".json") + ".crash.txt"
	return &crashWatch{dir: dir, rep: rep, res: res, path: path, made: map[int]bool{}}
}

// wrap returns run, which makes one run in the test process, noting
// each run before it starts.
func (w *crashWatch) wrap(run func(ctx context.Context, iter, procs int) outcome) func(ctx context.Context, iter, procs int) outcome {
	return func(ctx context.Context, iter, procs int) outcome {
		w.running(iter)
		return run(ctx, iter, procs)
	}
}

// running notes that run iter starts: at the first run it sends the
// process's fatal error report to the crash output file; at each it
// rewrites the in-progress result.
func (w *crashWatch) running(iter int) {
	if w.err != nil {
		return
	}
	if len(w.made) == 0 {
		if w.err = w.claimCrashOutput(); w.err != nil {
			return
		}
	}
	in := fmt.Sprintf("run %d of %d (%d runs had ended)", iter, w.rep.Iterations, w.rep.Runs)
	if w.made[iter] {
		in = fmt.Sprintf("run %d, made again after the runs (%d runs had ended)", iter, w.rep.Runs)
	}
	w.made[iter] = true
	w.res.InProgress, w.res.Runs = in, w.rep.Runs
	w.res.Failure = "the test process died during " + in + ", before the gate gave a verdict"
	w.res.Explanation = fmt.Sprintf("CRASHED %s: %s.\n"+
		"A panic in a goroutine the scenario started, os.Exit, running out of memory or a signal ends the test process\n"+
		"(Config.ProcessPerRun makes every run in a child process, where such an end fails only that run).",
		w.res.Scenario, w.res.Failure)
	js, err := w.res.Encode(w.dir)
	if err == nil {
		if n := w.size - len(js); n > 0 {
			js = append(js[:len(js)-1], append(bytes.Repeat([]byte{' '}, n), '\n')...)
		}
		w.size = len(js)
		_, err = w.f.WriteAt(js, 0)
	}
	if err != nil {
		w.err = fmt.Errorf("write the in-progress result of %s: %w", w.res.Scenario, err)
	}
}

// claimCrashOutput opens the in-progress result file, creates the crash
// output file and makes it the process's.
func (w *crashWatch) claimCrashOutput() error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	rf, err := os.Create(w.path)
	if err != nil {
		return err
	}
	w.f = rf
	f, err := os.Create(w.res.CrashOutput)
	if err != nil {
		return fmt.Errorf("crash output: %w", err)
	}
	defer f.Close() // SetCrashOutput keeps its own descriptor
	crashOutput.Lock()
	defer crashOutput.Unlock()
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		return fmt.Errorf("crash output: %w", err)
	}
	crashOutput.owner = w
	return nil
}

// end stops sending the fatal error report to the watch's file and
// removes it; the gate's result, written next, replaces the in-progress
// one. It returns the first error the watch met.
func (w *crashWatch) end() error {
	crashOutput.Lock()
	if crashOutput.owner == w {
		_ = debug.SetCrashOutput(nil, debug.CrashOptions{})
		crashOutput.owner = nil
	}
	crashOutput.Unlock()
	if w.f != nil {
		if err := w.f.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("write the in-progress result of %s: %w", w.res.Scenario, err)
		}
	}
	if len(w.made) > 0 {
		if err := os.Remove(w.res.CrashOutput); err != nil && w.err == nil && !errors.Is(err, fs.ErrNotExist) {
			w.err = fmt.Errorf("crash output: %w", err)
		}
	}
	if w.err != nil {
		return fmt.Errorf("harness: -gate.results: %w", w.err)
	}
	return nil
}
