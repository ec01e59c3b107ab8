// Package events is the tape every codegenie run writes: one [Event] per step,
// in a logical order that does not depend on goroutine scheduling, with a
// canonical encoding and a chain digest that gives one value per run.
//
// It is not a logging library and not a transport: it records in memory and
// encodes; persisting tapes as bundles is package bundle's job.
//
// # Events
//
// An [Event] has a logical sequence number Seq (1-based, dense, per run), the
// Seq of its causal Parent (0 for the root), a Kind, a Lane name ("" for the
// main lane), canonical Payload bytes and their PayloadDigest (blake3-256 of
// Payload). Two fields are nondeterministic by nature and are excluded from
// the chain digest: EmittedAt (wall clock from an injected Clock) and
// AuditEventID (from an injected ID source).
//
// [Recorder.Emit] makes each event a child of the event recorded just before
// it, so a pipeline of sequential steps needs no bookkeeping;
// [Recorder.EmitAfter] names another parent where the causal order is not
// the tape order.
//
// # Lanes
//
// Work done in several goroutines records through a [Fork]. Each goroutine
// takes its own named [Lane] of the fork and emits into it; when the fork is
// joined its lanes are appended to the tape ordered by (fork point, lane name,
// seq within the lane). Arrival time never decides the order. A lane event's
// parent is the previous event of its lane, or the fork's parent for the
// first one.
//
// # Canonical payload encoding
//
// Payloads are canonical JSON (see [Canonical]): the value is marshalled with
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
// # Chain digest
//
// [Chain] folds a tape into one blake3-256 digest: each event's fields, with
// its payload bound through PayloadDigest, are hashed after the digest of
// the events before it, so the digest changes if any event is edited,
// dropped or reordered. It first zeroes the fields it is told to strip:
// with [Nondeterministic], two runs that differ only there have equal
// digests and compare in O(1); [Compare] then locates the first
// difference of two unequal tapes. The bytes the chain hashes are specified
// by the package internal/eventrec.
package events
