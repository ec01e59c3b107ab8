package guard

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/codegenie/codegenie/events"
)

// WallClock returns the wall clock (time.Now) outside replay mode, in the
// type of events.Config.Clock. In replay mode it returns a
// *ReplayModeError with Op OpWallClock: a replayed run must use the
// recorded clock.
func WallClock(ctx context.Context) (func() time.Time, error) {
	if err := check(ctx, OpWallClock, "the wall clock was requested"); err != nil {
		return nil, err
	}
	//detvet:ignore WallClock is the wall clock outside replay mode by design; replay mode refuses it
	return time.Now, nil
}

// RecordedClock replays recorded timestamps, one per read, in order. It
// never reads the wall clock. It is safe for concurrent use, but concurrent
// readers get the timestamps in the order they happen to read them.
type RecordedClock struct {
	mu    sync.Mutex
	times []time.Time
	reads int
}

// ClockFromTape returns a clock that replays the EmittedAt of evs, in the
// order given (a Recorder's tape order), so that a replayed run stamps its
// events with the recorded times.
func ClockFromTape(evs []events.Event) *RecordedClock {
	ts := make([]time.Time, len(evs))
	for i, e := range evs {
		ts[i] = e.EmittedAt
	}
	return &RecordedClock{times: ts}
}

// Now returns the next recorded timestamp. Once the recording is
// exhausted it keeps returning the last one (the zero time if there were
// none) and Err reports the overrun; it never falls back to the wall clock.
func (c *RecordedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.reads
	c.reads++
	switch {
	case i < len(c.times):
		return c.times[i]
	case len(c.times) > 0:
		return c.times[len(c.times)-1]
	}
	return time.Time{}
}

// Reads returns how many times Now was called.
func (c *RecordedClock) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// Err returns nil while every read was served from the recording, and
// otherwise a *ReplayModeError with Op OpWallClock: the replayed run read
// the clock more often than the recorded one, and the only other source of
// time would have been the wall clock.
func (c *RecordedClock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads <= len(c.times) {
		return nil
	}
	return &ReplayModeError{Op: OpWallClock, Detail: fmt.Sprintf(
		"the recorded clock holds %d timestamps but was read %d times; the replayed run diverged from the recording",
		len(c.times), c.reads)}
}
