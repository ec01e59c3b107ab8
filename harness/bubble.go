package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// bubbleRunner runs each run inside synctest.Test.
type bubbleRunner struct {
	t        *testing.T
	rc       *resolved
	s        Scenario
	reported map[int]bool // leaked goroutines already attributed to a run
}

// clockStep is how far each run's fake clock is moved before the scenario
// starts: run i starts at the bubble epoch plus (i+1) clock steps plus i
// microseconds, so no two runs read the same time.
const clockStep = time.Hour

func (b *bubbleRunner) run(ctx context.Context, iter, procs int) (o outcome) {
	o = outcome{iter: iter, procs: procs}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err, ok := r.(error)
		if !ok || !strings.HasPrefix(err.Error(), "deadlock: ") {
			panic(r)
		}
		stuck := b.bubbled()
		if strings.Contains(err.Error(), "main bubble goroutine has exited") {
			o.leaks = stuck
			if o.errKind == "" {
				o.errKind = ErrorKindLeak
				o.errText = fmt.Sprintf("run %d left %d goroutine(s) blocked in its bubble", iter, len(stuck))
			}
			return
		}
		var sb strings.Builder
		for _, g := range stuck {
			fmt.Fprintf(&sb, "\n%s\n", g.Stack)
		}
		o.setErr(fmt.Errorf("%w: %v (every goroutine of the run is blocked; stacks:)%s", errDeadlock, err, sb.String()))
	}()
	parent := context.WithoutCancel(ctx)
	synctest.Test(b.t, func(*testing.T) {
		time.Sleep(time.Duration(iter+1)*clockStep + time.Duration(iter)*time.Microsecond)
		o = runScenario(parent, b.rc, iter, procs, true, b.s)
	})
	return o
}

// bubbled returns the goroutines stuck in a synctest bubble that were not
// reported before: after a deadlock panic they are the run's.
func (b *bubbleRunner) bubbled() []Goroutine {
	var out []Goroutine
	for _, g := range dumpGoroutines() {
		if strings.Contains(g.State, "synctest bubble") && !b.reported[g.ID] {
			b.reported[g.ID] = true
			out = append(out, g)
		}
	}
	return out
}
