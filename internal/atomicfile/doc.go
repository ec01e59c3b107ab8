// Package atomicfile replaces a file so that a reader, or the next run after
// a crash, sees either the old contents or the new ones, never a mixture: a
// half-written file never replaces a good one.
//
// It is for the small files codegenie writes whole (cassettes and their
// manifest, evidence, bundles, golden digests). It is not for appending, for
// directories (replay swaps bundle directories itself) or for locking:
// two writers racing on one path each replace the file whole, and the last
// rename wins.
//
// # Protocol
//
// A write creates a temporary file in the target's directory, named
// "."+base+".tmp-" plus a random suffix (os.CreateTemp's pattern
// "."+base+".tmp-*"), so the rename stays on one file system and the
// temporary file is hidden from glob patterns such as "*.json". It then
//
//  1. writes the data,
//  2. sets the mode to perm exactly (os.CreateTemp makes 0600; the umask
//     is not applied), before the sync so the mode is durable with the data,
//  3. fsyncs and closes the file,
//  4. renames it over the target, and
//  5. fsyncs the directory, best effort, so the rename survives a crash
//     where the platform allows it.
//
// A failure at any step before the rename removes the temporary file and
// leaves the target as it was. Errors wrap the cause with %w, name the step
// and the target path, and say that the previous file is unchanged.
//
// # Staging several files
//
// Options.Stage and Options.StageFunc do steps 1 to 3 and return a Staged
// file; Staged.Commit does steps 4 and 5 and Staged.Discard removes the
// temporary file instead. A caller replacing several files stages all of
// them first, so a failure while writing leaves every target unchanged.
//
// # Testing failures
//
// Options.CreateTemp, nil by default, replaces os.CreateTemp; a test returns
// a File whose Write, Sync or Close fails to simulate a full disk or a
// process killed mid-write. The seam is a parameter, not package state, so
// tests can run in parallel.
package atomicfile
