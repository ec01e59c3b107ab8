package cassettes

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/assign"
)

// laneHeader is the request header in which a recording notes the events
// lane a request was sent from (see Identical requests in the package
// documentation). It is never sent to the API.
const laneHeader = "Codegenie-Lane"

// laneValue is how laneHeader names the lane ctx carries: the Seq its
// fork follows and the lane's name, quoted; "" for a context without a
// lane.
func laneValue(ctx context.Context) string {
	l, ok := assign.LaneOf(ctx)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %q", l.After, l.Name)
}

// withLane returns req, or a clone of it noting the lane its context
// carries in laneHeader, for the recording.
func withLane(req *http.Request) *http.Request {
	v := laneValue(req.Context())
	if v == "" {
		return req
	}
	req = req.Clone(req.Context())
	req.Header.Set(laneHeader, v)
	return req
}

// withoutLane is the transport a recording sends through: laneHeader is
// for the cassette only.
type withoutLane struct{ next http.RoundTripper }

func (w withoutLane) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := req.Header[laneHeader]; ok {
		req = req.Clone(req.Context())
		req.Header.Del(laneHeader)
	}
	return w.next.RoundTrip(req)
}

// recordedLane returns the laneHeader value of the request h holds ("" for
// none), whatever case the cassette spells the header name in.
func recordedLane(h http.Header) string {
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if vs := h[name]; strings.EqualFold(name, laneHeader) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// assignment is what a Cassette keeps to assign identical requests by
// lane (see Identical requests in the package documentation). It is
// guarded by the Cassette's mu.
type assignment struct {
	// sent counts, per lane and key, the requests assigned so far.
	sent map[laneKey]int
	// base is, per fork and key, the number of interactions of the key
	// served before the fork's first request with it.
	base map[forkKey]int
}

type forkKey struct {
	fork any
	k    key
}

type laneKey struct {
	forkKey
	name string
}

// pick returns which of candidates (the interactions that match a
// request, in file order) serves the request sent with ctx whose
// meaningful headers are headers, or -1 when none can. By default it is
// the first one not busy whose headers agree: the order requests arrive
// in decides among identical ones. A request the harness sent with
// assign.Request.ByLane gets the candidate its lane's rank gives it
// instead, when that one can serve it. The choice is noted in the
// request's assign.Request. c.mu is held.
func (c *Cassette) pick(ctx context.Context, candidates []int, headers []string) int {
	first := -1
	for _, i := range candidates {
		if c.servable(i, headers) {
			first = i
			break
		}
	}
	ar := assign.RequestOf(ctx)
	if ar == nil || first < 0 {
		return first
	}
	target := first
	if ar.ByLane && len(candidates) > 1 {
		if i := c.byLane(ctx, candidates); i >= 0 && c.servable(i, headers) {
			target = i
		}
	}
	ar.Candidates, ar.Interaction, ar.Line = len(candidates), target, c.p.lines[target]
	return target
}

// servable reports whether interaction i can serve a request whose
// meaningful headers are headers.
func (c *Cassette) servable(i int, headers []string) bool {
	return !c.state[i].busy && headerConflict(c.p.canon[i].headers, headers) < 0
}

// byLane returns the candidate a request sent from the lane ctx carries
// gets under the rule of the package documentation (Identical requests),
// or -1 when the rule names none.
func (c *Cassette) byLane(ctx context.Context, candidates []int) int {
	l, _ := assign.LaneOf(ctx)
	a := &c.assigned
	if a.sent == nil {
		a.sent, a.base = map[laneKey]int{}, map[forkKey]int{}
	}
	k := c.p.keys[candidates[0]]
	if slices.ContainsFunc(candidates, func(i int) bool { return c.recordedLane(i) != "" }) {
		// The recording noted lanes: the lane's n-th request gets the
		// n-th interaction recorded from it. Lanes are counted as the
		// recording names them, so forks that follow the same event
		// share the count, as they share the recorded interactions.
		want := laneValue(ctx)
		lk := laneKey{forkKey: forkKey{k: k}, name: want}
		n := a.sent[lk]
		a.sent[lk] = n + 1
		for _, i := range candidates {
			if c.recordedLane(i) == want {
				if n == 0 {
					return i
				}
				n--
			}
		}
		return -1
	}
	names := []string{l.Name}
	if l.Names != nil {
		names = l.Names()
	}
	rank, ok := slices.BinarySearch(names, l.Name)
	if !ok {
		return -1
	}
	fk := forkKey{fork: l.Fork, k: k}
	base, seen := a.base[fk]
	if !seen {
		for _, i := range candidates {
			if c.state[i].started {
				base++
			}
		}
		a.base[fk] = base
	}
	lk := laneKey{forkKey: fk, name: l.Name}
	n := a.sent[lk]
	a.sent[lk] = n + 1
	if slot := base + n*len(names) + rank; slot < len(candidates) {
		return candidates[slot]
	}
	return -1
}

// recordedLane returns the lane recorded interaction i was sent from, as
// laneHeader names it ("" for none).
func (c *Cassette) recordedLane(i int) string {
	return recordedLane(c.interaction(i).Request.Headers)
}
