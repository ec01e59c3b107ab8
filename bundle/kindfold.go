package bundle

import (
	"encoding/json"

	"github.com/codegenie/codegenie/events"
)

// kindFoldName is the name of the generic fold (Folder.FoldName): the
// fold FoldTo uses when its caller gives none.
const kindFoldName = "codegenie/bundle.kinds/1"

// maxFoldKinds bounds the kinds the generic fold keeps apart. A bundle is
// untrusted and each kind kept holds its last payload, so the events of
// kinds past the first maxFoldKinds are only counted.
const maxFoldKinds = 1024

// kindFold is the generic fold: the state every tape has, whatever
// pipeline recorded it and whatever its payloads mean. For each event
// kind, in the order the kinds first appear, it keeps how many events
// had it and the seq, payload digest and payload of the last of them.
// It holds the payloads handed to Apply without copying them (a
// Reader's payloads are never written again).
type kindFold struct {
	// At is the seq of the last applied event, Applied how many were
	// applied.
	At      uint64 `json:"at"`
	Applied uint64 `json:"applied"`
	// Kinds are the kinds seen, in the order they first appeared.
	Kinds []kindState `json:"kinds"`
	// Other counts the events of kinds past the first maxFoldKinds.
	Other uint64 `json:"other,omitempty"`

	index map[events.Kind]int // position in Kinds; built at the first Apply
}

// kindState is what the generic fold keeps of one kind.
type kindState struct {
	Kind    events.Kind
	Count   uint64
	LastSeq uint64
	Digest  events.Digest
	Payload []byte // the last event's payload
}

// kindStateJSON is kindState as it is encoded: the last payload as JSON
// when it is JSON (what events.Recorder writes), else as bytes (base64).
type kindStateJSON struct {
	Kind    events.Kind     `json:"kind"`
	Count   uint64          `json:"count"`
	LastSeq uint64          `json:"last_seq"`
	Digest  events.Digest   `json:"last_digest"`
	JSON    json.RawMessage `json:"last_payload,omitempty"`
	Bytes   []byte          `json:"last_payload_bytes,omitempty"`
}

func (k kindState) MarshalJSON() ([]byte, error) {
	j := kindStateJSON{Kind: k.Kind, Count: k.Count, LastSeq: k.LastSeq, Digest: k.Digest}
	if json.Valid(k.Payload) {
		j.JSON = k.Payload
	} else {
		j.Bytes = k.Payload
	}
	return json.Marshal(j)
}

func (k *kindState) UnmarshalJSON(b []byte) error {
	var j kindStateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*k = kindState{Kind: j.Kind, Count: j.Count, LastSeq: j.LastSeq, Digest: j.Digest, Payload: j.Bytes}
	if j.JSON != nil {
		k.Payload = j.JSON
	}
	return nil
}

func (f *kindFold) FoldName() string { return kindFoldName }

func (f *kindFold) Apply(e events.Event) error {
	f.At = e.Seq
	f.Applied++
	if f.index == nil {
		f.index = make(map[events.Kind]int, len(f.Kinds))
		for i, k := range f.Kinds {
			f.index[k.Kind] = i
		}
	}
	i, ok := f.index[e.Kind]
	if !ok {
		if len(f.Kinds) == maxFoldKinds {
			f.Other++
			return nil
		}
		i = len(f.Kinds)
		f.Kinds = append(f.Kinds, kindState{Kind: e.Kind})
		f.index[e.Kind] = i
	}
	k := &f.Kinds[i]
	k.Count++
	k.LastSeq, k.Digest, k.Payload = e.Seq, e.PayloadDigest, e.Payload
	return nil
}
