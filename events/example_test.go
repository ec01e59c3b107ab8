package events_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/codegenie/codegenie/events"
)

func ExampleRecorder() {
	r := events.NewRecorder(events.Config{})
	root, _ := r.Emit(kindStarted, map[string]string{"scenario": "npm"})
	f := r.Fork(root)
	var wg sync.WaitGroup
	for _, name := range []string{"b", "a"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = f.Lane(name).Emit(kindRanked, name)
		}()
	}
	wg.Wait()
	_, _ = f.Join()
	_, _ = r.Emit(kindProduced, "done") // its parent is the event before it
	for _, e := range r.Events() {
		fmt.Println(e.Seq, e.Parent, e.Kind, e.Lane, string(e.Payload))
	}
	// Output:
	// 1 0 job.started  {"scenario":"npm"}
	// 2 1 search.ranked a "a"
	// 3 1 search.ranked b "b"
	// 4 3 result.produced  "done"
}

func ExampleCanonical() {
	b, _ := events.Canonical(map[string]any{"z": 1.50, "a": []int{2, 1}})
	fmt.Println(string(b))
	// Output: {"a":[2,1],"z":1.5}
}

func ExampleChain() {
	e := events.Event{Seq: 1, Kind: kindStarted, Payload: []byte(`{}`)}
	e.PayloadDigest = events.Sum(e.Payload)
	a := []events.Event{e}
	e.AuditEventID = "differs-every-run"
	b := []events.Event{e}
	fmt.Println(events.Chain(a, events.Nondeterministic) == events.Chain(b, events.Nondeterministic))
	fmt.Println(events.Chain(a, 0) == events.Chain(b, 0))
	// Output:
	// true
	// false
}

// A goroutine that sends requests sends them with its lane's context, so a
// gate's report can say which lane got which recorded answer when several
// match one request (and harness.Config.AssignByLane can fix which).
func ExampleLane_Context() {
	r := events.NewRecorder(events.Config{})
	root, _ := r.Emit(kindStarted, nil)
	f := r.Fork(root)
	lanes := []*events.Lane{f.Lane("a"), f.Lane("b")} // every lane taken before any sends
	var wg sync.WaitGroup
	for _, lane := range lanes {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(lane.Context(context.Background()), http.MethodGet, "https://api.example.test/v1/models", nil)
			if err == nil {
				_ = lane.Emit(kindRanked, req.URL.Path) // client.Do(req) in a pipeline
			}
		})
	}
	wg.Wait()
	_, _ = f.Join()
	fmt.Println(len(r.Events()), "events")
	// Output: 3 events
}
