package tapetest_test

import (
	"errors"
	"fmt"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/tapetest"
)

var kinds = tapetest.Kinds{
	Start: "job.start", Query: "job.query", Rank: "job.rank", Classify: "job.classify",
	Build: "job.build", Request: "job.request", Respond: "job.respond", Produce: "job.produce",
}

func ExampleRealistic() {
	a, err := tapetest.Realistic(kinds, 2, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := tapetest.Realistic(kinds, 2, 1)
	fmt.Println(len(a), a[0].Kind, a[7].Kind, len(a[4].Payload) > 1024)
	d := events.Compare(a, b, events.Nondeterministic)
	fmt.Println("diverge at", a[d.Index].Kind)
	_, err = tapetest.Realistic(tapetest.Kinds{}, 0, 0)
	fmt.Println(errors.Is(err, tapetest.ErrKind))
	// Output:
	// 8 job.start job.produce true
	// diverge at job.respond
	// true
}

func ExampleSynthetic() {
	evs := tapetest.Synthetic(kinds.List()[:2], 3, 64)
	for _, e := range evs {
		fmt.Println(e.Seq, e.Parent, e.Kind, len(e.Payload), e.Verify() == nil)
	}
	// Output:
	// 1 0 job.start 64 true
	// 2 1 job.query 64 true
	// 3 2 job.start 64 true
}

func ExamplePayload() {
	fmt.Println(string(tapetest.Payload(7, 32)))
	// Output: {"i":7,"text":"wxyz0123456789a"}
}

func ExampleKinds_List() {
	fmt.Println(kinds.List()[5])
	// Output: job.request
}
