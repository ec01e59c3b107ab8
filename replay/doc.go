// Package replay keeps runs as portable, tamper-evident bundles that anyone
// can verify, replay and compare offline, on another machine, months
// later. A bundle holds one run or many (each its own identity, pin,
// output bytes, error and event tape), with large payloads and outputs
// stored once by content address. The package writes and reads bundles,
// verifies them, streams a run's events through a fold the caller
// supplies (Folder) to rebuild its state, optionally from a snapshot,
// compares two runs with the comparison the determinism gate uses
// (events.Compare) plus their outputs, and merges bundles in a fixed
// order.
//
// It is not a recorder (that is package events), not a transport and not
// a database, and it knows no pipeline: what a run's state is, is the
// Folder's business (the fallback pipeline's is fallback.State).
//
// # Bundle layout
//
// The directory form:
//
//	manifest.json   digest of every other file; the bundle's identity
//	metadata.json   scenario, tool and Go versions
//	runs.json       each run: ID, pin, error, event count, chain, output digest
//	snapshot.json   optional: one run's state after a logical time
//	events.log      every run's records, run after run, with chain hashes
//	blobs/<hex>     large payloads and run outputs, named by the
//	                blake3-256 of their bytes
//
// No other file, directory or link may appear; a blob name is exactly 64
// lowercase hex digits (so "../" and the like are rejected by the name
// check before any path is built). Every JSON file is canonical JSON
// (events.Canonical) and must be byte-identical to the canonical encoding
// of its decoded value, with no unknown fields.
//
// The single-file form is the directory form as a tar stream (USTAR, mode
// 0644, mtime 0, no directory entries) in the fixed order manifest.json,
// metadata.json, runs.json, snapshot.json, blobs sorted by name,
// events.log, compressed as one zstd frame (level "better", 8 MiB window,
// one encoder goroutine, frame checksum on). The same bundle therefore
// always gives the same bytes, and
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
// # metadata.json and runs.json
//
//	{"go_version":"go1.26.8","scenario":"npm-lodash/happy","tool_version":"..."}
//
//	[{"chain":"<hex>","error":"...","events":N,"id":"run-000",
//	  "output":"<hex>","output_size":N,"pin":{"model":"...","run_key":"..."}},...]
//
// scenario is required. runs.json lists the runs sorted by ID; an ID is
// not empty, at most MaxString bytes of printable characters other than a
// comma, backslash or double quote, and unique. pin is the run's named
// pin strings (what its outcome depends on; the caller names them), error
// why it ended in an error, if it did. events and chain are the run's
// record count and chain head. output is the blake3-256 of the run's
// output bytes and output_size their length; a non-empty output is the
// blob of that name. The caller supplies every value; the package reads
// no environment (an empty go_version is filled with runtime.Version()).
//
// # events.log
//
//	log     = magic run*
//	magic   = "CGRLOG2\n"
//	run     = frame* trailer                ; one per runs.json entry, in its order
//	frame   = uvarint(len(stored)) stored chain      ; len(stored) >= 1
//	trailer = 0x00 uvarint(count) head
//
// stored is the canonical record of the event (events.AppendRecord), except
// that a payload of at least BlobThreshold bytes is stored as blobs/<hex of
// PayloadDigest> and the stored record carries an empty payload (an inline
// payload of BlobThreshold bytes or more is an error). A stored record
// with an empty payload whose PayloadDigest is not the digest of the empty
// string is such a reference.
//
// chain is the record's chain hash within its run, events.Chainer folding
// in the event's header record, h_i = blake3-256(h_(i-1) || header_i),
// h_0 = 32 zero bytes, where header_i is events.AppendHeader of the event
// (its record with the payload elided). The payload is bound to the chain
// through PayloadDigest, which verification checks against the payload
// bytes (inline) or the blob; so every payload byte is hashed once, the
// chain does not depend on whether a payload is inline or a blob, and a
// blob need not be in memory to check the chain. This is exactly
// events.Chain, so a run's head equals the chain of the tape it was
// written from. count is the number of the run's frames and head its last
// chain hash; both must match runs.json. All varints are minimal.
//
// # manifest.json
//
//	{"files":[{"digest":"<hex>","path":"...","size":N},...],
//	 "format":"codegenie-replay-bundle/2","self":"<hex>"}
//
// files lists every file but the manifest, sorted by path, with its size and
// blake3-256 digest (for events.log too: the digest of the whole file; for
// a blob, its name, which a manifest must agree with). self is the
// blake3-256 of the manifest's canonical JSON with self set to 64 zeros; it
// catches an edit that forgets to re-seal. The bundle digest (Reader.Digest,
// VerifyReport.Digest) is the blake3-256 of manifest.json, so it covers
// every byte of the bundle and is equal for both forms. A bundle of
// another version of the format is refused with ErrVersion, naming both
// versions.
//
// # snapshot.json
//
//	{"at":SEQ,"chain":"<hex>","fold":"<name>","records":N,"run":"<id>","state":{...}}
//
// The state of run run after its first N records, the last of which has
// seq at and the next (if any) a greater seq, as the fold named fold
// (SnapshotFolder.FoldName) computes it; chain is the run's chain hash
// after them. Reading checks that the snapshot fits its run (records, seq,
// chain); its state can only be judged by the fold that made it: ReplayTo
// with a fold of that name rebuilds the state from the records and
// requires it to be identical, so a snapshot cannot inject state.
// ReconstructFrom starts from a snapshot (partial replay) and reaches the
// state a full replay reaches (a property test checks this).
//
// # Validation
//
// Open and Verify check: the manifest (canonical, self digest, names,
// sizes); that the files present are exactly the files listed, all regular
// (no links); every file's size and digest; the metadata, runs and
// snapshot; for each record, in one streaming pass: framing and canonical
// encoding (events.ParseRecord), size bounds (MaxRecord, MaxString,
// MaxBlob), non-empty kind, seq 1 first in each run and then either the
// same seq on a greater lane (tapes merged from lanes) or the next seq, so
// seqs are dense; parent < seq (which, with dense seqs, means the parent
// exists and comes first); payload digest; chain hash; each run's trailer
// against the log and runs.json; then the end of the log. Logical time is
// the seq: EmittedAt is wall-clock and, like the other nondeterministic
// fields, is recorded but not ordered. Memory does not grow with the
// number of events. In the single-file form the blobs come before
// events.log: Open (and so Load and Diff) keeps them in memory, Verify
// only hashes them as they pass. The directory form reads and hashes a
// blob at its first reference and keeps it for later ones; Verify keeps
// none.
//
// Reader.Next (and so Load, ReplayTo, Diff) validates ahead of its caller
// on one goroutine of its own, in batches of up to 256 records or 1 MiB
// of payloads, two batches deep; the events, their order and the first
// error are those of a sequential read (one producer, in log order; a test
// checks it), and Close stops the goroutine and waits for it. Verify,
// which has nothing to overlap, validates on the caller's goroutine.
// BenchmarkVerify, BenchmarkLoad and BenchmarkHashFloor measure the cost
// (package fallback's BenchmarkReplay and BenchmarkValidationOverhead the
// cost of replay into its state); BenchmarkCompression and
// BenchmarkCompressionTier (real runs of the fallback tier) the size.
//
// # Bounds on untrusted bundles
//
// Bundles come from other machines, so what a read holds and hands out is
// bounded whatever a bundle holds (Options; the zero value uses the
// defaults): the blobs kept in memory total at most MaxBufferedBlobs
// (DefaultMaxBufferedBlobs, 128 MiB; Diff counts both bundles together),
// and the payloads Next hands out total at most MaxPayloadBytes
// (DefaultMaxPayloadBytes, 1 GiB), counting a blob once per event that
// refers to it; the bundles held whole (Load, Diff, Merge) total at most
// MaxLoadedBytes (DefaultMaxLoadedBytes, 64 MiB): every event's fixed size,
// kind, lane, audit ID and inline payload, and the metadata, runs and
// snapshot files, so strings repeated on every event count every time,
// however well they compress. A blob's bytes are shared by every event (and output)
// that refers to it, so a blob referred to many times costs its size
// once; payloads are read-only. A read that would pass a bound fails with
// a *LimitError naming it (cmd/replay names the flag that raises it).
//
// Every error is a *BundleError naming the bundle, the file in it ("" for
// the bundle itself, e.g. its zstd frame) and the record index (0-based,
// over all runs; -1 when not about a record), wrapping a sentinel:
// ErrDigest, ErrChain, ErrOrder, ErrRequired, ErrTruncated, ErrTooLarge (a
// *LimitError for the bounds of Options), ErrUnsafeName, ErrMissing,
// ErrMalformed, ErrVersion, or, for writes, ErrExists.
//
// # Writing
//
// Write and WriteFile write through internal/atomicfile: the path holds
// the old bundle or the new one at every moment, also across a kill, and
// the next write removes what an interrupted one left. They never replace
// anything that is not a bundle, and replace a bundle only with
// WriteOptions.Force. The order of the runs given does not matter: they
// are written sorted by ID.
//
// # Merge
//
// Merge follows the rules for combining records from several sources:
// records are a run's events, identified by (run ID, seq, lane) and
// ordered by seq, ties broken by that identity, then by the canonical
// record bytes; runs are ordered by ID. Duplicates by identity with equal
// bytes are dropped; the same identity with different bytes (an event, or
// a run's pin, output or error) is an ErrConflict error naming both
// sides. Merge is idempotent and independent of the order of its inputs
// (a property test checks both).
package replay
