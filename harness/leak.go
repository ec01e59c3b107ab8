package harness

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/goleak"
)

// Goroutine is one goroutine from a stack dump.
type Goroutine struct {
	ID int `json:"id"`
	// State is the bracketed state of the header line, e.g.
	// "chan receive" or "chan receive (durable), synctest bubble 3".
	State string `json:"state"`
	// CreatedBy is the goroutine that started it ("" if unknown).
	CreatedBy int `json:"created_by,omitempty"`
	// Stack is the goroutine's full stack as the runtime printed it.
	Stack string `json:"stack"`
}

// leakWatcher finds goroutines a run left behind when there is no
// synctest bubble to do it. It waits for them with goleak.Find, which
// retries with a growing pause, and attributes what is left by ancestry,
// so goroutines of other tests running in parallel are not blamed on the
// run.
type leakWatcher struct {
	baseline map[int]bool // goroutines known not to belong to a run
	ignore   []goleak.Option
}

func newLeakWatcher() *leakWatcher { return &leakWatcher{} }

func (w *leakWatcher) run(ctx context.Context, rc *resolved, iter, procs int, s Scenario) outcome {
	if w.baseline == nil {
		w.baseline = ids(dumpGoroutines())
		w.ignore = []goleak.Option{goleak.IgnoreCurrent()}
	}
	before := runtime.NumGoroutine()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan outcome, 1)
	var root atomic.Int64
	go func() {
		root.Store(int64(goroutineID()))
		done <- runScenario(rctx, rc, iter, procs, false, s)
	}()
	limit, why := runLimit(rc, time.Time{})
	o := watch(limit, why, iter, procs, done, func() ([]Goroutine, bool) {
		all := dumpGoroutines()
		cancel()
		stuck := descendants(all, int(root.Load()))
		w.baseline = ids(all)
		w.ignore = append(w.ignore, goleak.IgnoreCurrent())
		return stuck, false
	})
	if o.errKind == errorKindHung {
		return o
	}
	if runtime.NumGoroutine() <= before || goleak.Find(w.ignore...) == nil {
		return o
	}
	all := dumpGoroutines()
	o.leaks = w.attribute(all)
	// Report each goroutine once.
	w.baseline = ids(all)
	w.ignore = append(w.ignore, goleak.IgnoreCurrent())
	if len(o.leaks) > 0 && o.errKind == "" {
		o.errKind = errorKindLeak
		o.errText = fmt.Sprintf("run %d left %d goroutine(s) running", iter, len(o.leaks))
	}
	return o
}

// attribute returns the goroutines of all that are not in the baseline and
// do not descend from a live baseline goroutine: those started during the
// run, by the run's goroutine (which has exited) or its descendants.
func (w *leakWatcher) attribute(all []Goroutine) []Goroutine {
	byID := make(map[int]Goroutine, len(all))
	for _, g := range all {
		byID[g.ID] = g
	}
	var leaks []Goroutine
	for _, g := range all {
		if w.baseline[g.ID] {
			continue
		}
		foreign := false
		seen := map[int]bool{}
		for p := g.CreatedBy; p != 0 && !seen[p]; {
			seen[p] = true
			if w.baseline[p] {
				if _, alive := byID[p]; alive {
					foreign = true
				}
				break
			}
			parent, alive := byID[p]
			if !alive {
				break
			}
			p = parent.CreatedBy
		}
		if !foreign {
			leaks = append(leaks, g)
		}
	}
	return leaks
}

// descendants returns the goroutine root of all and those it started,
// directly or not.
func descendants(all []Goroutine, root int) []Goroutine {
	byID := make(map[int]Goroutine, len(all))
	for _, g := range all {
		byID[g.ID] = g
	}
	var out []Goroutine
	for _, g := range all {
		seen := map[int]bool{}
		for p := g.ID; p != 0 && !seen[p]; p = byID[p].CreatedBy {
			seen[p] = true
			if p == root {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// goroutineID returns the calling goroutine's id, from its stack header.
func goroutineID() int {
	buf := make([]byte, 64)
	//detvet:ignore the goroutine id tells the run's goroutines from others; it is only compared
	s, _ := strings.CutPrefix(string(buf[:runtime.Stack(buf, false)]), "goroutine ")
	id, _, _ := strings.Cut(s, " ")
	n, _ := strconv.Atoi(id)
	return n
}

func ids(gs []Goroutine) map[int]bool {
	m := make(map[int]bool, len(gs))
	for _, g := range gs {
		m[g.ID] = true
	}
	return m
}

// dumpGoroutines returns every goroutine's stack.
func dumpGoroutines() []Goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return parseGoroutines(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parseGoroutines parses runtime.Stack(buf, true) output: blocks separated
// by blank lines, each starting "goroutine N [state]:" and possibly ending
// "created by F in goroutine M".
func parseGoroutines(b []byte) []Goroutine {
	var out []Goroutine
	for block := range bytes.SplitSeq(b, []byte("\n\n")) {
		text := strings.TrimSpace(string(block))
		header, _, _ := strings.Cut(text, "\n")
		rest, ok := strings.CutPrefix(header, "goroutine ")
		if !ok {
			continue
		}
		idText, state, _ := strings.Cut(rest, " ")
		id, err := strconv.Atoi(idText)
		if err != nil {
			continue
		}
		g := Goroutine{ID: id, Stack: text}
		g.State = strings.TrimSuffix(strings.TrimPrefix(state, "["), "]:")
		if i := strings.LastIndex(text, "created by "); i >= 0 {
			line, _, _ := strings.Cut(text[i:], "\n")
			if j := strings.LastIndex(line, " in goroutine "); j >= 0 {
				g.CreatedBy, _ = strconv.Atoi(strings.TrimSpace(line[j+len(" in goroutine "):]))
			}
		}
		out = append(out, g)
	}
	return out
}
