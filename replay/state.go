package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/codegenie/codegenie/events"
)

// State is a run's state rebuilt from its events. Every field is derived
// from payloads by Apply; see the package documentation for the payload
// fields each kind contributes. Payloads that are not JSON objects or lack
// a field leave it unset: the builder is tolerant of payload shapes and
// strict only about order.
type State struct {
	// At is the Seq of the last applied event, Applied how many were
	// applied.
	At      uint64 `json:"at"`
	Applied uint64 `json:"applied"`

	Run        json.RawMessage   `json:"run,omitempty"`
	RunKey     string            `json:"run_key,omitempty"`
	Query      json.RawMessage   `json:"query,omitempty"`
	Examples   []json.RawMessage `json:"examples,omitempty"`
	Band       string            `json:"band,omitempty"`
	System     string            `json:"system,omitempty"`
	Prompt     string            `json:"prompt,omitempty"`
	Requests   uint64            `json:"requests,omitempty"`
	Completion string            `json:"completion,omitempty"`
	Transform  json.RawMessage   `json:"transform,omitempty"`
	Diff       string            `json:"diff,omitempty"`
	Failure    string            `json:"failure,omitempty"`

	// Last maps each kind seen to the PayloadDigest of its latest event.
	Last map[events.Kind]events.Digest `json:"last,omitempty"`
	// Unknown counts events of kinds the builder does not interpret.
	Unknown uint64 `json:"unknown,omitempty"`
}

// NewState returns the state before any event.
func NewState() *State { return &State{} }

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := *s
	c.Run = bytes.Clone(s.Run)
	c.Query = bytes.Clone(s.Query)
	c.Transform = bytes.Clone(s.Transform)
	if s.Examples != nil {
		c.Examples = make([]json.RawMessage, len(s.Examples))
		for i, e := range s.Examples {
			c.Examples[i] = bytes.Clone(e)
		}
	}
	c.Last = maps.Clone(s.Last)
	return &c
}

// Apply folds one event into s. Events must come in log order: an event
// whose Seq is before s.At is an ErrOrder error. The payload's shape is
// never an error.
func (s *State) Apply(e events.Event) error {
	if e.Seq == 0 || e.Seq < s.At {
		return wrapf(ErrOrder, "state: event seq %d applied after seq %d", e.Seq, s.At)
	}
	s.At = e.Seq
	s.Applied++
	if s.Last == nil {
		s.Last = map[events.Kind]events.Digest{}
	}
	s.Last[e.Kind] = e.PayloadDigest
	// The payload is decoded as an object only for the kinds that read its
	// fields.
	var obj map[string]json.RawMessage
	isObj, decoded := false, false
	object := func() bool {
		if !decoded {
			decoded = true
			isObj = json.Unmarshal(e.Payload, &obj) == nil
		}
		return isObj
	}
	str := func(names ...string) string {
		if !object() {
			return ""
		}
		for _, n := range names {
			var v string
			if raw, ok := obj[n]; ok && json.Unmarshal(raw, &v) == nil {
				return v
			}
		}
		return ""
	}
	switch e.Kind {
	case kindStarted:
		s.Run = canonicalRaw(e.Payload)
		s.RunKey = str("run_key", "run_key_digest", "RunKey")
	case kindQueried:
		s.Query = canonicalRaw(e.Payload)
	case kindRanked:
		var list []json.RawMessage
		raw := []byte(e.Payload)
		if object() {
			raw = nil
			for _, n := range []string{"results", "examples", "Results", "Examples"} {
				if obj[n] != nil {
					raw = obj[n]
					break
				}
			}
		}
		s.Examples = nil
		if json.Unmarshal(raw, &list) == nil {
			for _, x := range list {
				s.Examples = append(s.Examples, canonicalRaw(x))
			}
		}
	case kindClassified:
		s.Band = str("band", "top_band", "Band", "TopBand")
	case kindBuilt:
		s.System = str("system", "System")
		s.Prompt = str("user", "prompt", "text", "User", "Prompt")
	case kindRequested:
		s.Requests++
	case kindResponded:
		s.Completion = str("completion", "text", "content", "Completion")
	case kindProduced:
		s.Transform = canonicalRaw(e.Payload)
		s.Diff = str("diff", "Diff")
		s.Failure = ""
	case kindFailed:
		s.Failure = str("error", "reason", "message", "Error")
		if s.Failure == "" {
			s.Failure = string(e.Kind)
		}
	default:
		s.Unknown++
	}
	return nil
}

// canonicalRaw returns the canonical form of a JSON payload, or a JSON
// string holding the bytes if they are not JSON.
func canonicalRaw(b []byte) json.RawMessage {
	if c, err := events.CanonicalizeJSON(b); err == nil {
		return c
	}
	c, _ := json.Marshal(string(b))
	return c
}

// Reconstruct rebuilds the state by applying evs in order.
func Reconstruct(evs []events.Event) (*State, error) {
	s := NewState()
	for i, e := range evs {
		if err := s.Apply(e); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
	}
	return s, nil
}

// ReconstructFrom is partial replay: it starts from the snapshot's state
// and applies only the events of evs after it (Seq > snap.At). evs may be
// the whole log or just its tail. It reaches the same state as Reconstruct
// over the whole log.
func ReconstructFrom(snap *Snapshot, evs []events.Event) (*State, error) {
	s := snap.State.Clone()
	for i, e := range evs {
		if e.Seq <= snap.At {
			continue
		}
		if err := s.Apply(e); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
	}
	return s, nil
}

// MakeSnapshot returns the snapshot of evs after every event with
// Seq <= at. at must be the Seq of an event of evs.
func MakeSnapshot(evs []events.Event, at uint64) (*Snapshot, error) {
	n := 0
	for n < len(evs) && evs[n].Seq <= at {
		n++
	}
	if n == 0 || evs[n-1].Seq != at {
		return nil, wrapf(ErrRequired, "snapshot at seq %d: no event has that seq", at)
	}
	st, err := Reconstruct(evs[:n])
	if err != nil {
		return nil, err
	}
	return &Snapshot{At: at, Records: uint64(n), Chain: events.Chain(evs[:n]), State: *st}, nil
}

// ReplayTo streams the bundle at path and returns the state after the last
// event with Seq <= at (at 0: after every event). It starts from the
// bundle's snapshot when the snapshot is not past at (partial replay), and
// still validates the whole bundle, so a state is only returned from a
// bundle that verifies. at past the last event is an error.
func ReplayTo(ctx context.Context, path string, at uint64) (*State, error) {
	return Options{}.ReplayTo(ctx, path, at)
}

// ReplayTo is the package-level ReplayTo with o's bounds.
func (o Options) ReplayTo(ctx context.Context, path string, at uint64) (*State, error) {
	r, err := o.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	st, skip := NewState(), uint64(0)
	if s := r.Snapshot(); s != nil && (at == 0 || s.At <= at) {
		st, skip = s.State.Clone(), s.At
	}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if e.Seq <= skip || (at != 0 && e.Seq > at) {
			continue
		}
		if err := st.Apply(e); err != nil {
			return nil, &BundleError{Path: path, File: EventsFile, Record: r.consumed - 1, Op: "replay", Err: err}
		}
	}
	if at != 0 && st.At < at {
		return nil, &BundleError{Path: path, File: EventsFile, Record: -1, Op: "replay",
			Err: wrapf(ErrRequired, "seq %d is past the last event (seq %d)", at, r.order.seq)}
	}
	return st, nil
}
