package guard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/guard"
)

func ExampleWithReplay() {
	ctx := guard.WithReplay(context.Background())
	fmt.Println(guard.IsReplay(ctx), guard.IsReplay(context.Background()))
	// Output: true false
}

func ExampleIsReplay() {
	search := func(ctx context.Context) string {
		if guard.IsReplay(ctx) {
			return "served from the snapshot"
		}
		return "live query"
	}
	fmt.Println(search(guard.WithReplay(context.Background())))
	// Output: served from the snapshot
}

func ExampleAssertReplaySafe() {
	ctx := guard.WithReplay(context.Background())
	err := guard.AssertReplaySafe(ctx, "vector search")
	fmt.Println(err)
	rme, ok := errors.AsType[*guard.ReplayModeError](err)
	fmt.Println(ok, rme.Op)
	fmt.Println(guard.AssertReplaySafe(context.Background(), "vector search"))
	// Output:
	// guard: vector search is forbidden in replay mode
	// true vector search
	// <nil>
}

func ExampleReplayModeError() {
	err := error(&guard.ReplayModeError{Op: guard.OpWallClock})
	fmt.Println(err)
	// Output: guard: wall clock read is forbidden in replay mode; inject the recorded clock (guard.RecordedClock) instead of the wall clock
}

func ExampleTransport() {
	c := &http.Client{Transport: guard.Transport()}
	_, err := c.Get("https://api.anthropic.com/v1/messages")
	var rme *guard.ReplayModeError
	fmt.Println(errors.As(err, &rme), rme.Op)
	// Output: true network dial
}

func ExampleCountingDialer() {
	var c guard.CountingDialer // refuses and counts
	client := &http.Client{Transport: c.Transport()}
	_, _ = client.Get("http://example.com/")
	fmt.Println(c.Dials(), c.Connections(), c.Attempts())
	// Output: 1 0 [tcp example.com:80]
}

func ExampleWithDialCounter() {
	var c guard.CountingDialer
	ctx := guard.WithDialCounter(guard.WithReplay(context.Background()), &c)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://api.anthropic.com/", nil)
	_, _ = (&http.Client{Transport: guard.Transport()}).Do(req)
	fmt.Println(c.NoDials() != nil, c.Connections())
	// Output: true 0
}

func ExampleWallClock() {
	now, err := guard.WallClock(context.Background())
	fmt.Println(err, !now().IsZero())
	_, err = guard.WallClock(guard.WithReplay(context.Background()))
	fmt.Println(err.(*guard.ReplayModeError).Op)
	// Output:
	// <nil> true
	// wall clock read
}

func ExampleClockFromTape() {
	tape := []events.Event{
		{Seq: 1, EmittedAt: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)},
		{Seq: 2, EmittedAt: time.Date(2026, 11, 22, 1, 0, 3, 0, time.UTC)},
	}
	c := guard.ClockFromTape(tape)
	r := events.NewRecorder(events.Config{Clock: c.Now})
	_, _ = r.EmitAfter(0, kindStarted, nil)
	_, _ = r.EmitAfter(1, kindBuilt, nil)
	for _, e := range r.Events() {
		fmt.Println(e.Seq, e.EmittedAt.Format(time.TimeOnly))
	}
	// Output:
	// 1 01:00:00
	// 2 01:00:03
}

func ExampleRecordedClock_Err() {
	c := guard.ClockFromTape([]events.Event{{Seq: 1, EmittedAt: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)}})
	fmt.Println(c.Now().Format(time.TimeOnly), c.Err())
	c.Now() // one read more than the tape has
	_, overrun := errors.AsType[*guard.ReplayModeError](c.Err())
	fmt.Println(overrun)
	// Output:
	// 01:00:00 <nil>
	// true
}

func ExampleIDSource() {
	ids := guard.IDSource("runkey-1")
	a, b := ids(), ids()
	again := guard.IDSource("runkey-1")
	fmt.Println(len(a), a[14:15], a != b, again() == a, again() == b)
	// Output: 36 8 true true true
}

func ExampleRandomIDSource() {
	_, err := guard.RandomIDSource(guard.WithReplay(context.Background()))
	fmt.Println(err.(*guard.ReplayModeError).Op)
	ids, err := guard.RandomIDSource(context.Background())
	fmt.Println(err, len(ids()))
	// Output:
	// random ID
	// <nil> 36
}
