package harness

import (
	"context"
	"runtime"
	"sync"
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
// other cause explains to the replayed latency: the largest class whose
// first run replayed latency in the test process, other than run 0's, is
// made again with its own latencies (it must fall into its class again)
// and latencyControls times with the latencies of run 0 (each must fall
// into run 0's class). Only then is the latency a cause, and it replaces
// a stream chunking that was tried and not blamed.
func (s *latencyState) finish(ctx context.Context, rc *resolved, rep *Report, e env, g *grouper, classes []*group) {
	if s == nil || rep.Verdict != Nondeterministic || rep.BudgetExceeded || rep.Cancelled != "" || ctx.Err() != nil {
		return
	}
	if c := rep.Causes; c != nil && (c.Chunking == "" || len(c.Depends) > 0) {
		return
	}
	keys := make(map[*group]classKey, len(g.classes))
	for k, c := range g.classes {
		keys[c] = k
	}
	var base *group
	for _, c := range classes {
		if c.FirstRun == 0 {
			base = c
		}
	}
	if base == nil {
		return
	}
	for i, c := range classes {
		s.mu.Lock()
		used := s.used[c.FirstRun]
		s.mu.Unlock()
		if c == base || !used || c.ErrorKind == errorKindHung {
			continue
		}
		rerun := func(as0 bool) (classKey, bool) {
			s.mu.Lock()
			if as0 {
				s.as = map[int]int{c.FirstRun: 0}
			}
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				s.as = nil
				s.mu.Unlock()
			}()
			procs := rc.Procs[c.FirstRun%len(rc.Procs)]
			runtime.GOMAXPROCS(procs)
			o := e.run(ctx, c.FirstRun, procs)
			return g.keyOf(&o), ctx.Err() == nil && o.errKind != errorKindHung
		}
		if k, ok := rerun(false); !ok || k != keys[c] {
			return
		}
		for range latencyControls {
			if k, ok := rerun(true); !ok || k != keys[base] {
				return
			}
		}
		rep.Causes = &Causes{Run: c.FirstRun, Class: i + 1, Latency: true, Tried: []string{dimLatency}, Depends: []string{dimLatency}}
		return
	}
}
