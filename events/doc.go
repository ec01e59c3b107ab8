// Package events is the tape every codegenie run writes: one Event per step,
// in a logical order that does not depend on goroutine scheduling, with a
// canonical encoding and a chain digest that gives one value per run.
//
// It is not a logging library and not a transport: it records in memory and
// encodes; persisting tapes as bundles is the replay package's job.
//
// # Events
//
// An Event has a logical sequence number Seq (1-based, dense, per run), the
// Seq of its causal Parent (0 for the root), a Kind, a Lane name ("" for the
// main lane), canonical Payload bytes and their PayloadDigest (blake3-256 of
// Payload). Two fields are nondeterministic by nature and are excluded from
// the chain digest: EmittedAt (wall clock from an injected Clock) and
// AuditEventID (from an injected ID source).
//
// Recorder.Emit makes each event a child of the event recorded just before
// it, so a pipeline of sequential steps needs no bookkeeping; EmitAfter
// names another parent where the causal order is not the tape order.
//
// # Lanes
//
// Work done in several goroutines records through a Fork. Each goroutine
// takes its own named Lane of the fork and emits into it; when the fork is
// joined its lanes are appended to the tape ordered by (fork point, lane name,
// seq within the lane). Arrival time never decides the order. A lane event's
// parent is the previous event of its lane, or the fork's parent for the
// first one.
//
// # Canonical payload encoding
//
// Payloads are canonical JSON (see Canonical): the value is marshalled with
// encoding/json (HTML escaping off), then rewritten in one pass with object
// keys sorted by the bytes of their UTF-8 (a repeated key keeps its last
// value), no insignificant whitespace, strings escaped as encoding/json
// escapes them, and numbers written as encoding/json writes a float64: the
// shortest decimal that round-trips, in the ECMAScript number format, the
// same on every platform, zero of either sign as 0. Numbers that are
// integers fitting an int64 or uint64 are written as their exact digits
// instead. Infinities and NaN are rejected, and so is nesting deeper than
// 10000 levels. Go map order therefore never reaches the bytes, and the
// canonical form of canonical bytes is the same bytes.
//
// # Canonical record encoding
//
// AppendRecord writes one event as a binary record. All integers are unsigned
// LEB128 varints (encoding/binary Uvarint); strings and byte slices are a
// varint length followed by the bytes:
//
//	record  = seq parent kind lane payload digest emitted audit
//	seq     = uvarint
//	parent  = uvarint
//	kind    = uvarint-length bytes
//	lane    = uvarint-length bytes
//	payload = uvarint-length bytes
//	digest  = 32 bytes (blake3-256 of payload)
//	emitted = 0x00 for the zero time, or 0x01 followed by the signed
//	          (zig-zag) varint of UnixNano (encoding/binary Varint)
//	audit   = uvarint-length bytes
//
// Every varint is minimal and the emitted flag is 0 or 1: ParseRecord
// accepts this encoding only, so one event has one record. A record with
// the nondeterministic fields stripped encodes them as 0x00 and "".
//
// # Chain digest
//
// The chain over events e1..en is h0 = 32 zero bytes and
// hi = blake3-256(h(i-1) || header(ei)), where header(e) is AppendHeader of
// e, its record with an empty payload: the payload is bound through PayloadDigest, which
// Event.Verify checks against the payload bytes. Each payload is therefore
// hashed once, not twice, and a chain can be checked without holding large
// payloads in memory (replay bundles keep them as blobs). Chain returns hn for the
// events exactly as given; ChainDigest first strips the nondeterministic
// fields (Nondeterministic), so two runs that differ only there have equal
// digests and compare in O(1).
package events
