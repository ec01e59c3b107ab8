package guard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
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
	fmt.Println(errors.Is(err, guard.ErrReplayMode))
	fmt.Println(guard.AssertReplaySafe(context.Background(), "vector search"))
	// Output:
	// guard: vector search is forbidden in replay mode
	// true
	// <nil>
}

func ExampleGuard() {
	// A remote embedder guards its live call itself.
	embed := func(ctx context.Context, texts []string) error {
		if err := guard.Guard(ctx, guard.OpEmbed); err != nil {
			return err
		}
		return nil // call the model here
	}
	var rme *guard.ReplayModeError
	err := embed(guard.WithReplay(context.Background()), []string{"x"})
	fmt.Println(errors.As(err, &rme), rme.Op)
	// Output: true live embedding call
}

func ExampleReplayModeError() {
	err := error(&guard.ReplayModeError{Op: guard.OpWallClock})
	fmt.Println(err)
	// Output: guard: wall clock read is forbidden in replay mode; inject the recorded clock (guard.RecordedClock) instead of the wall clock
}

func ExampleRefuse() {
	_, err := guard.Refuse(context.Background(), "tcp", "api.anthropic.com:443")
	fmt.Println(err.(*guard.ReplayModeError).Detail)
	// Output: tcp connection to host "api.anthropic.com" (api.anthropic.com:443)
}

func ExampleGuardDial() {
	dial := guard.GuardDial(nil)
	_, err := dial(guard.WithReplay(context.Background()), "tcp", "api.openai.com:443")
	fmt.Println(errors.Is(err, guard.ErrReplayMode))
	// Output: true
}

func ExampleTransport() {
	c := &http.Client{Transport: guard.Transport()}
	_, err := c.Get("https://api.anthropic.com/v1/messages")
	var rme *guard.ReplayModeError
	fmt.Println(errors.As(err, &rme), rme.Op)
	// Output: true network dial
}

func ExampleGuardTransport() {
	c := &http.Client{Transport: guard.GuardTransport(nil)}
	req, _ := http.NewRequestWithContext(guard.WithReplay(context.Background()), http.MethodGet, "https://api.anthropic.com/", nil)
	_, err := c.Do(req)
	fmt.Println(errors.Is(err, guard.ErrReplayMode))
	// Output: true
}

func ExampleNewReplayClient() {
	// The cassette serves what was recorded and falls back to a transport
	// that refuses to dial.
	c := guard.NewReplayClient(cassette{
		Recorded: map[string]string{"/v1/messages": `{"content":"recorded"}`},
		Fallback: guard.Transport(),
	})
	ctx := guard.WithReplay(context.Background())
	for _, path := range []string{"/v1/messages", "/v1/embeddings"} {
		body, err := get(ctx, c, "https://api.example.com"+path)
		fmt.Println(body, errors.Is(err, guard.ErrReplayMode))
	}
	// Output:
	// {"content":"recorded"} false
	//  true
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
	_, _ = guard.NewReplayClient(nil).Do(req)
	fmt.Println(c.NoDials() != nil, c.Connections())
	// Output: true 0
}

func ExampleWallClock() {
	_, err := guard.WallClock(guard.WithReplay(context.Background()))
	fmt.Println(err.(*guard.ReplayModeError).Op)
	// Output: wall clock read
}

func ExampleNewRecordedClock() {
	t0 := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	c := guard.NewRecordedClock([]time.Time{t0, t0.Add(time.Second)})
	now := c.Clock()
	fmt.Println(now().Format(time.TimeOnly), now().Format(time.TimeOnly), c.Err())
	now()
	fmt.Println(c.Err() != nil)
	// Output:
	// 01:00:00 01:00:01 <nil>
	// true
}

func ExampleClockFromTape() {
	tape := []events.Event{
		{Seq: 1, EmittedAt: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)},
		{Seq: 2, EmittedAt: time.Date(2026, 11, 22, 1, 0, 3, 0, time.UTC)},
	}
	c := guard.ClockFromTape(tape)
	r := events.NewRecorder(events.Options{Clock: c.Clock()})
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
	c := guard.NewRecordedClock(nil)
	c.Now()
	fmt.Println(errors.Is(c.Err(), guard.ErrReplayMode))
	// Output: true
}

func ExampleIDSource() {
	ids := guard.IDSource("runkey-1")
	a, b := ids(), ids()
	fmt.Println(a == guard.DeterministicID("runkey-1", 1), b == guard.DeterministicID("runkey-1", 2), a != b)
	// Output: true true true
}

func ExampleDeterministicID() {
	id := guard.DeterministicID("runkey-1", 7)
	fmt.Println(len(id), id[14:15], id == guard.DeterministicID("runkey-1", 7))
	// Output: 36 8 true
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

func ExampleLiveEmbedder() {
	e := guard.LiveEmbedder(&fakeEmbedder{})
	_, err := e.Embed(guard.WithReplay(context.Background()), []string{"text"})
	fmt.Println(strings.HasPrefix(err.Error(), "guard: live embedding call is forbidden in replay mode"))
	// Output: true
}
