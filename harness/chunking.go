package harness

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/chunking"
)

// dimChunking names the stream chunking where causes are listed.
const dimChunking = "stream chunking (the Read boundaries of replayed response bodies)"

// chunkState is the stream chunking of one gate's runs in the test
// process: run i's replayed bodies are cut into Reads by
// chunking.ForRun(i) (run 0 as recorded). A nil chunkState (a child
// process) delivers every body as recorded, so that what a child
// changes is what its process perturbations change.
type chunkState struct {
	mu sync.Mutex
	// reverted delivers every body as recorded: the control of
	// attribution.
	reverted bool
	// used is the plan of each run that replayed a response.
	used map[int]chunking.Plan
}

// plan returns the plan of run and notes it as used.
func (s *chunkState) plan(run int) chunking.Plan {
	if s == nil {
		return chunking.Plan{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reverted {
		return chunking.Plan{}
	}
	p := chunking.ForRun(run)
	if s.used == nil {
		s.used = map[int]chunking.Plan{}
	}
	s.used[run] = p
	return p
}

// withPlan returns req with the chunk plan of run on its context.
func (s *chunkState) withPlan(req *http.Request, run int) *http.Request {
	p := s.plan(run)
	if p == (chunking.Plan{}) {
		return req
	}
	return req.WithContext(chunking.With(req.Context(), p))
}

func (s *chunkState) revert(on bool) {
	s.mu.Lock()
	s.reverted = on
	s.mu.Unlock()
}

// finish fills rep.Chunking and, when no other cause was found, traces a
// difference between runs of the test process to the chunking.
func (s *chunkState) finish(ctx context.Context, rc *resolved, rep *Report, e env, g *grouper, classes []*group) {
	if s == nil {
		return
	}
	s.mu.Lock()
	for run, p := range s.used {
		for len(rep.Chunking) <= run {
			rep.Chunking = append(rep.Chunking, "")
		}
		rep.Chunking[run] = p.String()
	}
	s.mu.Unlock()
	if rep.Causes == nil && rep.Verdict == gate.Nondeterministic && !rep.BudgetExceeded && rep.Cancelled == "" && ctx.Err() == nil {
		rep.Causes = s.attribute(ctx, rc, e, g, classes)
	}
}

// chunkControls is how many times the traced run is made again with its
// bodies delivered as recorded: each must agree with run 0, so a
// difference that comes and goes by chance is not blamed on the chunking.
const chunkControls = 2

// attribute traces a difference between runs of the test process to
// the chunking (traceInProcess, chunkControls times with every body
// delivered as recorded). It returns nil when no class qualifies.
func (s *chunkState) attribute(ctx context.Context, rc *resolved, e env, g *grouper, classes []*group) *gate.Causes {
	planOf := func(run int) chunking.Plan {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.used[run]
	}
	class, run, cause := traceInProcess(ctx, rc, e, g, classes,
		func(run int) bool { return planOf(run) != (chunking.Plan{}) },
		func(_ int, on bool) { s.revert(on) }, chunkControls)
	if class == 0 {
		return nil
	}
	cs := &gate.Causes{Run: run, Class: class, Chunking: planOf(run).String(), Tried: []string{dimChunking}}
	if cause {
		cs.Depends = []string{dimChunking}
	}
	return cs
}

// writeChunking prints the chunk plans of the runs, grouped by plan.
func writeChunking(sb *strings.Builder, plans []string) {
	if len(plans) == 0 {
		return
	}
	var order []string
	runs := map[string][]int{}
	for run, p := range plans {
		if p == "" {
			continue
		}
		if runs[p] == nil {
			order = append(order, p)
		}
		runs[p] = append(runs[p], run)
	}
	sb.WriteString("stream chunking (replayed bodies cut into Reads by a plan drawn from the run number; child processes deliver as recorded):\n")
	for _, p := range order {
		rs := runs[p]
		shown := rs[:min(len(rs), 8)]
		parts := make([]string, len(shown))
		for i, r := range shown {
			parts[i] = fmt.Sprint(r)
		}
		more := ""
		if len(rs) > len(shown) {
			more = fmt.Sprintf(", ... (%d runs)", len(rs))
		}
		fmt.Fprintf(sb, "  %s: run(s) %s%s\n", p, strings.Join(parts, ", "), more)
	}
}

// writeChunkingCause writes that making run c.Run again traced the
// difference to the stream chunking.
func writeChunkingCause(sb *strings.Builder, c *gate.Causes) {
	fmt.Fprintf(sb, "the outcome depends on: %s: run %d (class %d), made again in the test process, agrees with run 0 when its bodies are delivered as recorded (%d times), and cut by its plan %q it differs again.\n", strings.Join(c.Depends, "; "), c.Run, c.Class, chunkControls, c.Chunking)
	sb.WriteString("  A reader of the response body takes each Read as a whole frame or line, which a network does not keep: read it through bufio (or the SDK's stream decoder), never one Read per frame.\n")
}
