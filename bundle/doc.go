// Package bundle keeps runs as portable, tamper-evident bundles that
// anyone can verify, fold and compare offline, on another machine, months
// later. A bundle holds one run or many (each its own identity, pin,
// output bytes, error and event tape), with large payloads and outputs
// stored once by content address. The package writes and reads bundles,
// verifies them, streams a run's events through a fold the caller
// supplies ([Folder]) to rebuild its state, optionally from a snapshot,
// compares two runs with the comparison the determinism gate uses
// (events.Compare) plus their outputs, and merges bundles in a fixed
// order.
//
// It is not a recorder (that is package events), not a transport and not
// a database, and it knows no pipeline: what a run's state is, is the
// Folder's business (the fallback pipeline's is fallback.State); the one
// fold it has, the generic fold, reads any tape without knowing what its
// payloads mean.
//
// # Bundles
//
// A bundle is a directory, or one file (its name ends in [FileExt]) that
// is the directory as a compressed tar stream; both hold the same bytes
// and have the same bundle digest. Every operation on a bundle on disk is
// a method of [Config], whose zero value is the defaults:
// [Config.Write] and [Config.WriteFile] write one from a [Bundle] of
// [Run] values and their [Metadata]; [Config.Open] streams one back
// through a [Reader], [Config.Load] reads it whole, and [Config.Verify]
// checks every file and record without keeping the events.
// [Run.Snapshot] stores one run's state after a logical time, from which
// [Snapshot.Resume] folds the rest of the run through a [Folder];
// [Config.FoldTo] folds a run of a bundle on disk, through the caller's
// fold the bundle's snapshot names, or the caller's first, or the
// generic fold (per event kind: the count and the last event's seq,
// payload digest and payload) when given none. A bundle only names a
// fold, so folding it runs no code it brings; and a snapshot cannot
// inject state, because FoldTo rebuilds the state from the records and
// requires it to be identical. [Config.Diff] compares two
// runs ([RunRef]) and [Config.Merge] combines bundles. The byte format
// is specified in docs/FORMATS.md at the root of the module.
//
// # Validation
//
// [Config.Open] and [Config.Verify] check every byte against the format
// before a caller sees it: the manifest and every file's size and digest,
// each record's encoding, order, payload digest and chain hash, and each
// run's trailer. Logical time is the seq: EmittedAt is wall-clock and, like the
// other nondeterministic fields, is recorded but not ordered. Memory does
// not grow with the number of events.
//
// Reader.Next (and so Load, FoldTo, Diff) validates ahead of its caller
// on one goroutine of its own, in batches of up to 256 records or 1 MiB
// of payloads, two batches deep; the events, their order and the first
// error are those of a sequential read (one producer, in log order; a test
// checks it), and Close stops the goroutine and waits for it. Verify,
// which has nothing to overlap, validates on the caller's goroutine.
// BenchmarkVerify, BenchmarkLoad and BenchmarkHashFloor measure the cost
// (package fallback's BenchmarkFold and BenchmarkValidationOverhead the
// cost of folding into its state); BenchmarkCompression and
// BenchmarkCompressionTier (real runs of the fallback tier) the size.
//
// # Bounds on untrusted bundles
//
// Bundles come from other machines, so what a read holds and hands out is
// bounded whatever a bundle holds ([Config]; the zero value uses the
// defaults): the blobs kept in memory total at most MaxBufferedBlobs
// (128 MiB by default; Diff counts both bundles together),
// and the payloads Next hands out total at most MaxPayloadBytes
// (1 GiB by default), counting a blob once per event that
// refers to it; the bundles held whole (Load, Diff, Merge) total at most
// MaxLoadedBytes (64 MiB by default): every event's fixed size,
// kind, lane, audit ID and inline payload, and the metadata, runs and
// snapshot files, so strings repeated on every event count every time,
// however well they compress. A blob's bytes are shared by every event (and output)
// that refers to it, so a blob referred to many times costs its size
// once; payloads are read-only. A read that would pass a bound fails with
// a [*LimitError] naming it (cmd/bundle names the flag that raises it).
//
// Every error is a [*BundleError] naming the bundle, the file in it (""
// for the bundle itself, e.g. its zstd frame) and the record index
// (0-based, over all runs; -1 when not about a record). Callers branch on
// [ErrExists] (a write would replace what it may not) and [ErrConflict]
// (a merge met two different records with one identity); any other error
// means the bundle does not verify.
//
// # Writing
//
// [Config.Write] and [Config.WriteFile] write through
// internal/atomicfile: the path holds the old bundle or the new one at
// every moment, also across a kill, and the next write removes what an
// interrupted one left. They never replace anything that is not a bundle,
// and replace a bundle only with [Config.Force]. The order of the runs
// given does not matter: they are written sorted by ID.
//
// # Merge
//
// [Config.Merge] follows the rules for combining records from several
// sources: records are a run's events, identified by (run ID, seq, lane)
// and ordered by seq, ties broken by that identity, then by the canonical
// record bytes; runs are ordered by ID. Duplicates by identity with equal
// bytes are dropped; the same identity with different bytes (an event, or
// a run's pin, output or error) is an ErrConflict error naming both
// sides. Merge is idempotent and independent of the order of its inputs
// (a property test checks both).
package bundle
