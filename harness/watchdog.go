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

// abandoned counts the goroutines left waiting for the outcomes of hung
// runs (the harness's own tests wait for them after releasing the runs).
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

// watch waits for a run's outcome on done, at most limit (0: no limit;
// see await for a run that ends as its limit comes). A run past it is
// abandoned: its outcome is a hungError with the stacks stuck returns.
func watch(limit time.Duration, why string, iter, procs int, done <-chan outcome, stuck func() ([]Goroutine, bool)) outcome {
	if limit <= 0 {
		return <-done
	}
	o, ended, ok := await(limit, done)
	if ok {
		return o
	}
	stacks, bubbled := stuck()
	abandoned.Add(1)
	go func() {
		defer abandoned.Done()
		<-ended
	}()
	o = outcome{iter: iter, procs: procs}
	o.setErr(&hungError{run: iter, limit: limit, why: why, stacks: stacks, bubbled: bubbled})
	return o
}

// await waits for a run's outcome on done until limit has passed. It
// returns the outcome and true when the run ended before its limit, and
// otherwise false, ended being closed when the run ends (its outcome is
// then dropped). A run must end before its limit: one whose outcome comes
// at the instant its limit does, as at one instant of a synctest bubble's
// fake clock, counts as past it, as a context's deadline counts as passed
// at its instant; on the real clock, so does one that ends just before
// its limit and is seen just after (the limit is a safety net, far beyond
// a run's duration). The limit's own timer, which nothing waits on, is
// asked without waiting once either event has woken the wait, so which
// of two ready events woke it does not matter: a receive from a timer's
// channel succeeds once the clock has reached the timer's instant.
func await(limit time.Duration, done <-chan outcome) (o outcome, ended <-chan struct{}, ok bool) {
	var got outcome // the relay's own: read only once end is closed
	end := make(chan struct{})
	go func() {
		got = <-done
		close(end)
	}()
	due := time.NewTimer(limit) // says whether the limit has come
	defer due.Stop()
	wake := time.NewTimer(limit) // wakes the wait; made after due, never due before it
	defer wake.Stop()
	select {
	case <-end:
	case <-wake.C:
	}
	if fired(due) {
		return outcome{}, end, false
	}
	<-end // wake has not fired: the run ended
	return got, end, true
}

// fired reports, without waiting, whether t has fired.
func fired(t *time.Timer) bool {
	select {
	case <-t.C:
		return true
	default:
		return false
	}
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
