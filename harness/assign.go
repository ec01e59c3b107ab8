package harness

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/assign"
)

// withAssignment returns req with a context that carries an
// assign.Request, which the cassette fills in with the interaction that
// answers req, and the lane req was sent from (see events.Lane.Context)
// as sentRequest.Lane shows it ("" for none).
func (rc *runClient) withAssignment(req *http.Request) (*http.Request, *assign.Request, string) {
	ar := &assign.Request{ByLane: rc.run.rc.AssignByLane}
	lane := ""
	if l, ok := assign.LaneOf(req.Context()); ok {
		lane = fmt.Sprintf("%q after event %d", l.Name, l.After)
	}
	return req.WithContext(assign.WithRequest(req.Context(), ar)), ar, lane
}

// noteAssignment records which recorded interaction answered request i
// of the run, sent from lane, when several matched it.
func (r *Run) noteAssignment(i int, lane string, ar *assign.Request) {
	if ar.Candidates < 2 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.requests[i]
	s.Lane, s.Identical, s.Interaction, s.Line = lane, ar.Candidates, ar.Interaction, ar.Line
	for _, p := range r.requests[:i] {
		if lane != "" && p.Lane == lane {
			s.LaneOrder++
		}
	}
}

// slot is one request that several recorded interactions matched, as
// the same request of another run is found: by its lane, its order in
// the lane and its digest.
type slot struct {
	lane   string
	order  int
	digest events.Digest
}

// assignmentDiff lists, for each request that several recorded
// interactions matched, sent from a lane (see events.Lane.Context), and
// answered by different interactions in the kept runs of different
// classes, which interaction answered it in each class; nil when the
// kept runs agree or fewer than two classes kept a run.
func assignmentDiff(classes []*group, key string) []string {
	type got struct {
		class, run int
		req        sentRequest
	}
	by := map[slot][]got{}
	for n, c := range classes {
		if c.first == nil {
			continue
		}
		for _, r := range c.first.requests {
			if r.Identical > 1 && r.Lane != "" {
				s := slot{r.Lane, r.LaneOrder, r.Digest}
				by[s] = append(by[s], got{n + 1, c.first.iter, r})
			}
		}
	}
	slots := make([]slot, 0, len(by))
	for s, gs := range by {
		if slices.ContainsFunc(gs, func(g got) bool { return g.req.Interaction != gs[0].req.Interaction }) {
			slots = append(slots, s)
		}
	}
	slices.SortFunc(slots, func(a, b slot) int {
		return cmp.Or(strings.Compare(a.lane, b.lane), cmp.Compare(a.order, b.order), slices.Compare(a.digest[:], b.digest[:]))
	})
	var out []string
	for k, s := range slots {
		if k == maxRequestDiff {
			return append(out, fmt.Sprintf("... and %d more requests", len(slots)-k))
		}
		gs := by[s]
		parts := make([]string, len(gs))
		for k, g := range gs {
			parts[k] = fmt.Sprintf("interaction %d (line %d) in run %d (class %d)", g.req.Interaction, g.req.Line, g.run, g.class)
		}
		r := gs[0].req
		out = append(out, fmt.Sprintf("lane %s, its request %d (%s %s, %d recorded answers): %s",
			maskText(s.lane, key), s.order, r.Method, maskText(r.URL, key), r.Identical, strings.Join(parts, ", ")))
	}
	return out
}
