// Package replay turns a run's event tape into a portable, tamper-evident
// bundle that anyone can verify, replay and diff offline, on another
// machine, months later; it rebuilds a run's state from its events
// (optionally starting from a snapshot), compares two runs with the same
// code the determinism gate uses (events.Compare) and merges tapes from
// several lanes or shards in a fixed order.
//
// It is not a recorder (that is package events), not a transport and not
// a store of many runs: one bundle holds one run.
//
// # Bundle layout
//
// The directory form:
//
//	manifest.json   digest of every other file; the bundle's identity
//	metadata.json   pin, scenario, versions, status
//	snapshot.json   optional: the state after a logical time
//	events.log      the event records with their chain hashes
//	blobs/<hex>     large payloads, named by the blake3-256 of their bytes
//
// No other file, directory or link may appear; a blob name is exactly 64
// lowercase hex digits (so "../" and the like are rejected by the name
// check before any path is built). Every JSON file is canonical JSON
// (events.Canonical) and must be byte-identical to the canonical encoding
// of its decoded value, with no unknown fields.
//
// The single-file form is the directory form as a tar stream (USTAR, mode
// 0644, mtime 0, no directory entries) in the fixed order manifest.json,
// metadata.json, snapshot.json, blobs sorted by name, events.log,
// compressed as one zstd frame (level "better", 8 MiB window, one encoder
// goroutine, frame checksum on). The same bundle therefore always gives the
// same bytes, and
//
//	zstd -dc RUN.bundle.zst | tar -x -C DIR
//
// gives the directory form. Nothing may follow events.log in the tar
// stream, nothing may follow the end of the tar stream in the frame (the
// first byte after it is an error; nothing more is decompressed), and
// nothing may follow the frame in the file (no second frame, empty or
// skippable). A frame asking for a window larger than 8 MiB is refused
// before anything is decompressed.
//
// # metadata.json
//
//	{"error":"...","go_version":"go1.26.8",
//	 "pin":{"cassette_id":"...","embedding_model_digest":"...",
//	        "repo_snapshot_sha":"...","run_key":"...","store_digest":"..."},
//	 "run":"iteration-07","scenario":"...","status":"CAPTURED","tool_version":"..."}
//
// status is PENDING (captured so far), CAPTURED (complete) or FAILED (not
// captured: opening the bundle gives ErrReplayUnavailable; error says why).
// pin.run_key and scenario are required unless FAILED. The caller supplies
// every value; the package reads no environment.
//
// # events.log
//
//	log     = magic frame* trailer
//	magic   = "CGRLOG1\n"
//	frame   = uvarint(len(stored)) stored chain      ; len(stored) >= 1
//	trailer = 0x00 uvarint(count) head
//
// stored is the canonical record of the event (events.AppendRecord), except
// that a payload of at least BlobThreshold bytes is stored as blobs/<hex of
// PayloadDigest> and the stored record carries an empty payload (an inline
// payload of BlobThreshold bytes or more is an error). A stored
// record with an empty payload whose PayloadDigest is not the digest of the
// empty string is such a reference.
//
// chain is the record's chain hash, events.Chainer folding in the event's
// header record, h_i = blake3-256(h_(i-1) || header_i), h_0 = 32 zero
// bytes, where header_i is AppendRecord of the event with the payload
// elided (empty). The payload is bound to the chain through PayloadDigest,
// which verification checks against the payload bytes (inline) or the blob;
// so every payload byte is hashed once, the chain does not depend on
// whether a payload is inline or a blob, and a blob need not be in memory
// to check the chain. This is exactly events.Chain, so a bundle's head
// equals the chain of the tape it was written from. count is the
// number of frames and head the last chain hash. All varints are minimal.
//
// # manifest.json
//
//	{"chain":"<hex>","events":N,"files":[{"digest":"<hex>","path":"...","size":N},...],
//	 "format":"codegenie-replay-bundle/1","self":"<hex>"}
//
// files lists every file but the manifest, sorted by path, with its size and
// blake3-256 digest (for events.log too: the digest of the whole file; for
// a blob, its name, which a manifest must agree with).
// events and chain repeat the trailer. self is the
// blake3-256 of the manifest's canonical JSON with self set to 64 zeros; it
// catches an edit that forgets to re-seal. The bundle digest (Reader.Digest,
// VerifyReport.Digest) is the blake3-256 of manifest.json, so it covers
// every byte of the bundle and is equal for both forms.
//
// # snapshot.json
//
//	{"at":SEQ,"chain":"<hex>","records":N,"state":{...State...}}
//
// The state (see State) after the first N records, the last of which has seq
// at and the next (if any) a greater seq; chain is the chain hash after
// them. Verification rebuilds that state from the records and requires it to
// be identical, so a snapshot cannot inject state. Partial replay starts
// from it: ReconstructFrom for a tape in memory, ReplayTo for a bundle on
// disk; both reach the state a full replay reaches (a property test checks
// this).
//
// # Validation
//
// Open and Verify check: the manifest (canonical, self digest, names,
// sizes); that the files present are exactly the files listed, all regular
// (no links); every file's size and digest; metadata required fields and
// status; for each record, in one streaming pass: framing and canonical
// encoding, size bounds (MaxRecord, MaxString, MaxBlob), non-empty kind,
// seq 1 first and then either the same seq on a greater lane (tapes merged
// from lanes) or the next seq, so seqs are dense; parent < seq (which,
// with dense seqs, means the parent exists and comes first); payload digest;
// chain hash; then the trailer against the log and the manifest, and the
// snapshot. Logical time is the seq: EmittedAt is wall-clock and, like the
// other nondeterministic fields, is recorded but not ordered. Memory does
// not grow with the number of events. In the single-file form the blobs
// come before events.log: Open (and so Load and Diff) keeps them in
// memory, Verify only hashes them as they pass. The directory form reads
// and hashes a blob at its first reference and keeps it for later ones;
// Verify keeps none.
//
// # Bounds on untrusted bundles
//
// Bundles come from other machines, so what a read holds and hands out is
// bounded whatever a bundle holds (Options; the zero value uses the
// defaults): the blobs kept in memory total at most MaxBufferedBlobs
// (DefaultMaxBufferedBlobs, 128 MiB; Diff counts both bundles together),
// and the payloads Next hands out total at most MaxPayloadBytes
// (DefaultMaxPayloadBytes, 1 GiB), counting a blob once per event that
// refers to it. A blob's bytes are shared by every event that refers to
// it, so a blob referred to many times costs its size once; payloads are
// read-only. A read that would pass a bound fails with a *LimitError
// naming it (cmd/replay names the flag that raises it).
//
// The cost of validation is hashing. Per record: the payload digest
// (blake3 of the payload) and the chain hash (blake3 of the previous head
// and the header record, about 110 bytes); both inputs are too short for
// blake3's SIMD paths, so these are one 64-byte compression per block in
// Go (about 80 ns each here). On top, the digest of events.log as a whole,
// which hashes the inline payloads a second time, in large pieces where
// blake3's SIMD paths make it nearly free; it is what lets the manifest
// give the digest of every file (b3sum can check it). A record is parsed
// once: the validating scan also yields the event.
//
// Reader.Next (and so Load, ReplayTo, Diff) validates ahead of its caller
// on one goroutine of its own, in batches of up to 256 records or 1 MiB
// of payloads, two batches deep; the events, their order and the first
// error are those of a sequential read (one producer, in log order; a test
// checks it), and Close stops the goroutine and waits for it. With a
// spare core, validation then overlaps what the caller does with the
// events (rebuilding the state, diffing) and adds little to the wall
// time; on one core it adds its CPU cost. Verify, which has nothing to
// overlap, validates on the caller's goroutine.
//
// BenchmarkVerify, BenchmarkLoad, BenchmarkReplay (validated replay
// against decode-only baselines, run with -cpu 1,2) and BenchmarkHashFloor
// measure it; BenchmarkCompression and BenchmarkCompressionTier (tapes of
// the fallback tier on the fixture scenarios) measure the single-file
// form's size.
//
// Every error is a *BundleError naming the bundle, the file in it ("" for
// the bundle itself, e.g. its zstd frame) and the record index (0-based,
// -1 when not about a record), wrapping a sentinel: ErrDigest, ErrChain,
// ErrOrder, ErrRequired, ErrTruncated, ErrTooLarge (a *LimitError for the
// bounds of Options), ErrUnsafeName, ErrMissing, ErrMalformed,
// ErrReplayUnavailable, or, for writes, ErrExists.
//
// # Writing
//
// Write and WriteFile write through internal/atomicfile: the path holds
// the old bundle or the new one at every moment, also across a kill, and
// the next write removes what an interrupted one left. They never replace
// anything that is not a bundle, and replace a bundle only with
// WriteOptions.Force.
//
// # State
//
// State.Apply folds one event into the state. It reads these fields of
// JSON-object payloads and ignores everything else (a payload that is not
// an object, or lacks a field, leaves the field unset; only order errors):
//
//	run.started         the whole payload                   -> Run
//	                    run_key | run_key_digest (strings)  -> RunKey
//	retrieval.queried   the whole payload                   -> Query
//	retrieval.ranked    results | examples | a bare array   -> Examples
//	band.classified     band | top_band                     -> Band
//	prompt.built        system                              -> System
//	                    user | prompt | text                -> Prompt
//	llm.requested       (counted)                           -> Requests
//	llm.responded       completion | text | content         -> Completion
//	transform.produced  the whole payload                   -> Transform
//	                    diff                                -> Diff
//	transform.failed    error | reason | message            -> Failure
//	any kind            PayloadDigest                       -> Last[kind]
//
// These are the field names package fallback writes; the Go-style names
// (RunKey, TopBand, User, ...) are accepted as alternatives. Whole payloads
// are kept in canonical JSON.
//
// # Merge
//
// Merge orders events by seq, then by canonical identity (seq, lane), then
// by canonical record bytes; drops exact duplicates; and rejects two events
// with the same identity and different bytes with ErrConflict. It is
// idempotent and independent of the order of its inputs.
package replay
