package harness

import (
	"context"
	"sync"

	"github.com/codegenie/codegenie/gate"
)

// dimLatency names the replayed latency where causes are listed.
const dimLatency = "replayed latency (the fake time each replayed response takes, Config.Latency)"

// latencyState is the replayed latency of one gate's runs in the test
// process: run i's responses take Config.Latency(i, call, recorded), or,
// while attribution makes run i again with the latencies of run j, j's.
type latencyState struct {
	mu sync.Mutex
	// as maps a run made again to the run whose latencies it takes.
	as map[int]int
	// used is the runs whose responses took a replayed latency.
	used map[int]bool
}

// runFor returns the run whose latencies run takes, and notes that run
// replayed latency. A nil latencyState (a child process) is run itself.
func (s *latencyState) runFor(run int) int {
	if s == nil {
		return run
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used == nil {
		s.used = map[int]bool{}
	}
	s.used[run] = true
	if j, ok := s.as[run]; ok {
		return j
	}
	return run
}

// latencyControls is how many times the traced run is made again with
// the latencies of run 0: each must agree with run 0, so a difference
// that comes and goes by chance is not blamed on the latency.
const latencyControls = 2

// finish traces a difference between runs of the test process that no
// other cause explains to the replayed latency (traceInProcess,
// latencyControls times with the latencies of run 0); it replaces a
// stream chunking that was tried and not blamed.
func (s *latencyState) finish(ctx context.Context, rc *resolved, rep *Report, e env, g *grouper, classes []*group) {
	if s == nil || rep.Verdict != gate.Nondeterministic || rep.BudgetExceeded || rep.Cancelled != "" || ctx.Err() != nil {
		return
	}
	if c := rep.Causes; c != nil && (c.Chunking == "" || len(c.Depends) > 0) {
		return
	}
	used := func(run int) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.used[run]
	}
	asRun0 := func(run int, on bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.as = nil
		if on {
			s.as = map[int]int{run: 0}
		}
	}
	if class, run, cause := traceInProcess(ctx, rc, e, g, classes, used, asRun0, latencyControls); cause {
		rep.Causes = &gate.Causes{Run: run, Class: class, Latency: true, Tried: []string{dimLatency}, Depends: []string{dimLatency}}
	}
}
