package harness

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// bubbleRunner runs each run inside synctest.Test, watched from outside
// the bubble (see watch).
type bubbleRunner struct {
	t        *testing.T
	rc       *resolved
	s        Scenario
	deadline time.Time // go test's -timeout, zero for none
}

func newBubbleRunner(t *testing.T, rc *resolved, s Scenario) *bubbleRunner {
	b := &bubbleRunner{t: t, rc: rc, s: s}
	b.deadline, _ = t.Deadline()
	return b
}

// clockStep is how far each run's fake clock is moved before the scenario
// starts: run i starts at the bubble epoch plus (i+1) clock steps plus i
// microseconds, so no two runs read the same time.
const clockStep = time.Hour

// bubbled is a run's end as its goroutine sees it: the outcome, or a
// panic that is not the bubble's deadlock, handed to the caller.
type bubbled struct {
	o     outcome
	panic any
}

func (b *bubbleRunner) run(ctx context.Context, iter, procs int) outcome {
	var id atomic.Int64
	ended := make(chan bubbled, 1)
	go func() { ended <- b.runBubble(ctx, iter, procs, &id) }()
	done := make(chan outcome, 1)
	var p any
	go func() {
		e := <-ended
		p = e.panic
		done <- e.o
	}()
	limit, why := runLimit(b.rc, b.deadline)
	o := watch(limit, why, iter, procs, done, func() ([]Goroutine, bool) { return inBubble(int(id.Load())), true })
	if o.errKind != errorKindHung && p != nil {
		panic(p)
	}
	return o
}

// runBubble makes the run in a new bubble, noting the bubble's id in id.
// A deadlock of the bubble fails the run with the stacks of its blocked
// goroutines.
func (b *bubbleRunner) runBubble(ctx context.Context, iter, procs int, id *atomic.Int64) (e bubbled) {
	e.o = outcome{iter: iter, procs: procs}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err, ok := r.(error)
		if !ok || !strings.HasPrefix(err.Error(), "deadlock: ") {
			e.panic = r
			return
		}
		stuck := inBubble(int(id.Load()))
		if strings.Contains(err.Error(), "main bubble goroutine has exited") {
			e.o.leaks = stuck
			if e.o.errKind == "" {
				e.o.errKind = errorKindLeak
				e.o.errText = fmt.Sprintf("run %d left %d goroutine(s) blocked in its bubble", iter, len(stuck))
			}
			return
		}
		var sb strings.Builder
		for _, g := range stuck {
			fmt.Fprintf(&sb, "\n%s\n", g.Stack)
		}
		e.o.setErr(fmt.Errorf("%w: %v (every goroutine of the run is blocked; stacks:)%s", errDeadlock, err, sb.String()))
	}()
	parent := context.WithoutCancel(ctx)
	synctest.Test(b.t, func(*testing.T) {
		id.Store(int64(bubbleID()))
		time.Sleep(time.Duration(iter+1)*clockStep + time.Duration(iter)*time.Microsecond)
		e.o = runScenario(parent, b.rc, iter, procs, true, b.s)
	})
	return e
}
