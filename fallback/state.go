package fallback

import (
	"encoding/json"
	"fmt"

	"github.com/codegenie/codegenie/events"
)

// StateFold is the name of State's fold and of its JSON format, as
// snapshots record it (bundle.Folder.FoldName).
const StateFold = "codegenie/fallback.State/1"

// State is the state of one Tier.Run rebuilt from its events: this
// pipeline's fold (bundle.Folder), which bundle.Config.FoldTo runs over a
// run of a bundle. Each
// step's field holds the payload of the step's latest event as recorded
// (canonical JSON; see the package documentation for the payloads), so
// nothing is guessed or decoded; Requests counts the LLM requests. Apply
// costs the same whatever the payloads; their JSON is checked when the
// state is encoded (a payload that is not JSON fails the encoding, naming
// the step: Tier.Run records JSON only).
type State struct {
	// At is the Seq of the last applied event, Applied how many were
	// applied.
	At      uint64 `json:"at"`
	Applied uint64 `json:"applied"`

	Started    json.RawMessage `json:"run_started,omitempty"`
	Queried    json.RawMessage `json:"retrieval_queried,omitempty"`
	Ranked     json.RawMessage `json:"retrieval_ranked,omitempty"`
	Classified json.RawMessage `json:"band_classified,omitempty"`
	Prompt     json.RawMessage `json:"prompt_built,omitempty"`
	Requests   uint64          `json:"llm_requests,omitempty"`
	Request    json.RawMessage `json:"llm_requested,omitempty"`
	Response   json.RawMessage `json:"llm_responded,omitempty"`
	Transform  json.RawMessage `json:"transform_produced,omitempty"`
	Failure    json.RawMessage `json:"transform_failed,omitempty"`

	// Last maps each kind seen to the PayloadDigest of its latest event.
	Last map[events.Kind]events.Digest `json:"last,omitempty"`
	// Unknown counts events of kinds Tier.Run does not record.
	Unknown uint64 `json:"unknown,omitempty"`
}

// NewState returns the state before any event.
func NewState() *State { return &State{} }

// FoldName returns StateFold.
func (s *State) FoldName() string { return StateFold }

// Apply folds one event into s. Events come in log order: an event whose
// Seq is before s.At is an error. The payload is kept, not copied:
// payloads handed out by a bundle reader are never written again.
func (s *State) Apply(e events.Event) error {
	if e.Seq == 0 || e.Seq < s.At {
		return fmt.Errorf("fallback state: event seq %d applied after seq %d", e.Seq, s.At)
	}
	slot := s.slot(e.Kind)
	s.At = e.Seq
	s.Applied++
	if s.Last == nil {
		s.Last = map[events.Kind]events.Digest{}
	}
	s.Last[e.Kind] = e.PayloadDigest
	switch {
	case slot != nil:
		*slot = e.Payload
	default:
		s.Unknown++
	}
	if e.Kind == KindLLMRequested {
		s.Requests++
	}
	if e.Kind == KindTransformProduced {
		s.Failure = nil
	}
	return nil
}

// slot returns the field that holds the latest payload of kind k, or nil.
func (s *State) slot(k events.Kind) *json.RawMessage {
	switch k {
	case KindRunStarted:
		return &s.Started
	case KindRetrievalQueried:
		return &s.Queried
	case KindRetrievalRanked:
		return &s.Ranked
	case KindBandClassified:
		return &s.Classified
	case KindPromptBuilt:
		return &s.Prompt
	case KindLLMRequested:
		return &s.Request
	case KindLLMResponded:
		return &s.Response
	case KindTransformProduced:
		return &s.Transform
	case KindTransformFailed:
		return &s.Failure
	}
	return nil
}

// stateJSON is State without its methods, for MarshalJSON.
type stateJSON State

// MarshalJSON encodes s, first checking that every payload it holds is
// JSON.
func (s *State) MarshalJSON() ([]byte, error) {
	for _, k := range []events.Kind{KindRunStarted, KindRetrievalQueried, KindRetrievalRanked, KindBandClassified,
		KindPromptBuilt, KindLLMRequested, KindLLMResponded, KindTransformProduced, KindTransformFailed} {
		if p := *s.slot(k); p != nil && !json.Valid(p) {
			return nil, fmt.Errorf("fallback state: the %s payload of the run is not JSON", k)
		}
	}
	return json.Marshal((*stateJSON)(s))
}
