package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/codegenie/codegenie/internal/assign"
)

// errJoined is returned when a lane or fork is used after its fork was
// joined.
var errJoined = errors.New("fork already joined")

// Config configures a Recorder. The zero value records no timestamps and no
// IDs, which is what replay wants; production callers inject both.
type Config struct {
	// Clock stamps EmittedAt. If nil, EmittedAt is left zero.
	Clock func() time.Time
	// NewID returns a fresh ID for AuditEventID. If nil,
	// they are left empty.
	NewID func() string
}

// Recorder builds one run's tape. It is safe for concurrent use; concurrent
// work must record through a Fork so that the order is logical.
type Recorder struct {
	cfg Config

	mu     sync.Mutex
	events []Event
	forks  []*Fork // opened and not yet seen joined by JoinOpen
}

// NewRecorder returns an empty recorder.
func NewRecorder(cfg Config) *Recorder { return &Recorder{cfg: cfg} }

func (r *Recorder) stamp(e *Event) {
	if r.cfg.Clock != nil {
		e.EmittedAt = r.cfg.Clock()
	}
	if r.cfg.NewID != nil {
		e.AuditEventID = r.cfg.NewID()
	}
}

// Emit appends an event on the main lane whose causal parent is the
// previous event of the tape (0, the root, for the first) and returns its
// Seq. payload is encoded with Canonical; a json.RawMessage is taken as
// JSON and canonicalised.
func (r *Recorder) Emit(kind Kind, payload any) (uint64, error) {
	return r.emit(false, 0, kind, payload)
}

// EmitAfter is Emit with an explicit causal parent: the Seq of an event
// already on the tape, or 0 for a root.
func (r *Recorder) EmitAfter(parent uint64, kind Kind, payload any) (uint64, error) {
	return r.emit(true, parent, kind, payload)
}

func (r *Recorder) emit(explicit bool, parent uint64, kind Kind, payload any) (uint64, error) {
	b, err := Canonical(payload)
	if err != nil {
		return 0, fmt.Errorf("events: emit %s: %w", kind, err)
	}
	e := Event{Kind: kind, Payload: b, PayloadDigest: Sum(b)}
	r.stamp(&e)
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Seq = uint64(len(r.events)) + 1
	e.Parent = e.Seq - 1
	if explicit {
		if parent >= e.Seq {
			return 0, fmt.Errorf("events: emit %s: parent %d does not exist yet (next seq %d)", kind, parent, e.Seq)
		}
		e.Parent = parent
	}
	r.events = append(r.events, e)
	return e.Seq, nil
}

// Events returns a copy of the tape so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Len returns the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Fork opens a fork point whose lanes will be children of parent.
func (r *Recorder) Fork(parent uint64) *Fork {
	f := &Fork{r: r, parent: parent, lanes: map[string]*Lane{}}
	r.mu.Lock()
	r.forks = append(r.forks, f)
	r.mu.Unlock()
	return f
}

// JoinOpen joins every fork of r that was not joined yet, in the order
// they were opened, and returns how many it joined. A runner calls it
// when a run ends, so a run that returned before joining its forks (on
// an error, say) still has its lanes' events on the tape.
func (r *Recorder) JoinOpen() int {
	r.mu.Lock()
	forks := r.forks
	r.forks = nil
	r.mu.Unlock()
	n := 0
	for _, f := range forks {
		if _, err := f.Join(); err == nil {
			n++
		}
	}
	return n
}

// Fork is a fork point for concurrent work. Lanes are taken with Lane and
// merged into the tape by Join.
type Fork struct {
	r      *Recorder
	parent uint64

	mu     sync.Mutex
	joined bool
	lanes  map[string]*Lane
}

// Lane returns the lane with the given name, creating it on first use. Each
// lane must be written by one goroutine at a time. A lane taken after the
// fork was joined refuses every event with ErrJoined.
func (f *Fork) Lane(name string) *Lane {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.lanes[name]; ok {
		return l
	}
	l := &Lane{f: f, name: name, closed: f.joined}
	if !f.joined {
		f.lanes[name] = l
	}
	return l
}

// Join appends every lane's events to the tape, lanes ordered by name and
// events by their order within the lane, and returns the Seq of the last
// appended event of each lane, by lane name. Lane-local parents are resolved
// to tape seqs.
func (f *Fork) Join() (map[string]uint64, error) {
	f.mu.Lock()
	if f.joined {
		f.mu.Unlock()
		return nil, errJoined
	}
	f.joined = true
	lanes := make([]*Lane, 0, len(f.lanes))
	for _, l := range f.lanes {
		lanes = append(lanes, l)
	}
	f.mu.Unlock()
	slices.SortFunc(lanes, func(a, b *Lane) int { return cmp.Compare(a.name, b.name) })

	r := f.r
	r.mu.Lock()
	defer r.mu.Unlock()
	last := make(map[string]uint64, len(lanes))
	for _, l := range lanes {
		l.mu.Lock()
		evs := l.events
		l.events = nil
		l.closed = true
		l.mu.Unlock()
		base := uint64(len(r.events))
		for i, e := range evs {
			e.Seq = base + uint64(i) + 1
			if i == 0 {
				e.Parent = f.parent
			} else {
				e.Parent = e.Seq - 1
			}
			r.events = append(r.events, e)
		}
		if len(evs) > 0 {
			last[l.name] = base + uint64(len(evs))
		}
	}
	return last, nil
}

// Lane is one named sequence of events inside a Fork.
type Lane struct {
	f    *Fork
	name string

	mu     sync.Mutex
	events []Event
	closed bool // set by Join when it takes the events
}

// Emit records an event in the lane. Its parent is the previous event of
// the lane, or the fork's parent for the first one. After Join has taken
// the lane's events, Emit returns ErrJoined and records nothing; an event
// Emit accepted is always on the tape.
func (l *Lane) Emit(kind Kind, payload any) error {
	b, err := Canonical(payload)
	if err != nil {
		return fmt.Errorf("events: lane %q emit %s: %w", l.name, kind, err)
	}
	e := Event{Kind: kind, Lane: l.name, Payload: b, PayloadDigest: Sum(b)}
	l.f.r.stamp(&e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("events: lane %q emit %s: %w", l.name, kind, errJoined)
	}
	l.events = append(l.events, e)
	return nil
}

// Context returns ctx carrying the lane. A request sent with it (or with
// a context derived from it) through a harness run's client is known to
// come from this lane: when several recorded interactions match it, the
// report says which one each lane got, and Config.AssignByLane in the
// harness package makes that assignment deterministic.
func (l *Lane) Context(ctx context.Context) context.Context {
	return assign.WithLane(ctx, assign.Lane{Fork: l.f, After: l.f.parent, Name: l.name, Names: l.f.names})
}

// names returns the names of the lanes taken from f so far, sorted.
func (f *Fork) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.lanes))
	for n := range f.lanes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
