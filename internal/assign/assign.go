package assign

import "context"

// Lane is one lane of one fork of an events recorder.
type Lane struct {
	// Fork identifies the fork (comparable; nil for no fork) and After is
	// the Seq of its causal parent.
	Fork  any
	After uint64
	// Name is the lane's name.
	Name string
	// Names returns the names of the lanes taken from the fork so far,
	// sorted; nil for no fork.
	Names func() []string
}

// Request is what a transport learns about one replayed request. The
// harness sets ByLane before sending it; the cassette sets the rest.
type Request struct {
	// ByLane asks for the deterministic assignment among several
	// matching interactions (see the cassettes package documentation).
	ByLane bool
	// Candidates is the number of recorded interactions that match the
	// request; Interaction (0-based, in file order) and Line (1-based)
	// name the one that answered it. Candidates is 0 when none answered.
	Candidates  int
	Interaction int
	Line        int
}

type laneKey struct{}

type requestKey struct{}

// WithLane returns ctx carrying l.
func WithLane(ctx context.Context, l Lane) context.Context {
	return context.WithValue(ctx, laneKey{}, l)
}

// LaneOf returns the lane ctx carries, and false for none.
func LaneOf(ctx context.Context) (Lane, bool) {
	l, ok := ctx.Value(laneKey{}).(Lane)
	return l, ok
}

// WithRequest returns ctx carrying r.
func WithRequest(ctx context.Context, r *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestOf returns the Request ctx carries, or nil.
func RequestOf(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}
