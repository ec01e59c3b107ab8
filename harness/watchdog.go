package harness

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// defaultRunTimeout bounds one run in the test process when
// Config.RunTimeout is 0.
const defaultRunTimeout = 2 * time.Minute

// deadlineMargin is the time a gate keeps before go test's -timeout to
// write its report and result when a run hangs.
const deadlineMargin = 20 * time.Second

// hungError is a run that did not end within Config.RunTimeout. Its
// goroutines cannot be stopped from outside (a bubble's goroutines are
// unreachable from outside it): they are left running.
type hungError struct {
	run     int
	limit   time.Duration
	why     string
	stacks  []Goroutine
	bubbled bool
}

func (e *hungError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "run %d hung: it did not end within %v (%s); no further run was started. ", e.run, e.limit, e.why)
	if e.bubbled {
		sb.WriteString("A run blocked on I/O, a system call, a lock or a channel from outside its synctest bubble is not durably blocked, so the bubble cannot report a deadlock; ")
	}
	fmt.Fprintf(&sb, "its %d goroutine(s) were left running; stacks:", len(e.stacks))
	for _, g := range e.stacks {
		fmt.Fprintf(&sb, "\n\n%s", g.Stack)
	}
	return sb.String()
}

// abandoned counts the hung runs whose goroutines are still running (the
// harness's own tests wait for them after releasing them).
var abandoned sync.WaitGroup

// runLimit is how long a run in the test process may take: RunTimeout,
// cut to end deadlineMargin before the test's deadline (zero: none). It
// returns 0 for no limit, and what sets the limit.
func runLimit(rc *resolved, deadline time.Time) (time.Duration, string) {
	limit, why := rc.RunTimeout, "Config.RunTimeout"
	if limit < 0 {
		limit = 0
	}
	if !deadline.IsZero() {
		//detvet:ignore a run's time limit is what is left of go test's -timeout, on the real clock by design
		d := max(time.Until(deadline)-deadlineMargin, time.Second)
		//detvet:ignore the limit is a safety net; it decides only when a hung run is abandoned
		if limit == 0 || d < limit {
			limit, why = d, fmt.Sprintf("what was left of go test's -timeout, less %v for the report", deadlineMargin)
		}
	}
	return limit, why
}

// watch waits for a run's outcome on done, at most limit (0: no limit).
// A run past it is abandoned: its outcome is a hungError with the stacks
// stuck returns.
func watch(limit time.Duration, why string, iter, procs int, done <-chan outcome, stuck func() ([]Goroutine, bool)) outcome {
	if limit <= 0 {
		return <-done
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	//detvet:ignore a run's outcome against its time limit, a safety net far beyond a run's duration
	select {
	case o := <-done:
		return o
	case <-t.C:
	}
	stacks, bubbled := stuck()
	abandoned.Add(1)
	go func() {
		defer abandoned.Done()
		<-done
	}()
	o := outcome{iter: iter, procs: procs}
	o.setErr(&hungError{run: iter, limit: limit, why: why, stacks: stacks, bubbled: bubbled})
	return o
}

// bubbleID returns the id of the synctest bubble of the calling goroutine,
// 0 outside one.
func bubbleID() int {
	buf := make([]byte, 512)
	//detvet:ignore the bubble id tells a run's goroutines from others; it is only compared
	header, _, _ := strings.Cut(string(buf[:runtime.Stack(buf, false)]), "\n")
	return parseBubble(header)
}

// parseBubble reads the bubble id from a goroutine header or state
// ("... synctest bubble 3 ..."), 0 when there is none.
func parseBubble(s string) int {
	_, rest, ok := strings.Cut(s, "synctest bubble ")
	if !ok {
		return 0
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	id, _ := strconv.Atoi(rest[:end])
	return id
}

// inBubble returns the goroutines of bubble id.
func inBubble(id int) []Goroutine {
	var out []Goroutine
	for _, g := range dumpGoroutines() {
		if id != 0 && parseBubble(g.State) == id {
			out = append(out, g)
		}
	}
	return out
}
