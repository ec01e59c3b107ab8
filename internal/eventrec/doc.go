// Package eventrec is the byte format of one event record and of the chain
// digest over records. It knows no Go type of the events package: the
// events package builds its chain digest on it, and internal/tape converts
// between events.Event and records for the packages that store or send
// tapes (bundles, the harness child protocol).
//
// # Record
//
// All integers are unsigned LEB128 varints (encoding/binary Uvarint);
// strings and byte slices are a varint length followed by the bytes:
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
// Every varint is minimal and the emitted flag is 0 or 1: [Parse] accepts
// this encoding only, so one event has one record. A record with the
// nondeterministic fields stripped encodes them as 0x00 and "".
//
// # Chain
//
// The chain over events e1..en is h0 = 32 zero bytes and
// hi = blake3-256(h(i-1) || header(ei)), where header(e) is the record of e
// with an empty payload ([AppendHeader]): the payload is bound through its
// digest. Each payload is therefore hashed once, and a chain can be checked
// without holding large payloads in memory. [Chainer] computes it.
package eventrec
