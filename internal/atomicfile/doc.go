// Package atomicfile replaces a file or a directory tree so that a reader,
// or the next run after a crash, sees either the old contents or the new
// ones, never a mixture or nothing: a half-written file never replaces a
// good one. It is the one way codegenie writes files (cassettes and their
// manifest, evidence, bundles in both forms, golden digests).
//
// It is not for appending or for locking: two writers of one path must
// not run at once (each replaces the target whole, the last one wins, and
// the cleanup of one may remove the other's temporary file).
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
//  5. fsyncs the directory so the rename survives a crash (where the
//     platform cannot sync a directory, this step does nothing; any other
//     failure is returned, saying that the new file is in place).
//
// A failure at any step before the rename removes the temporary file and
// leaves the target as it was. Errors wrap the cause with %w, name the step
// and the target path, and say that the previous file is unchanged.
//
// # Directories
//
// StageDir creates a temporary directory ".NAME.tmp-<digits>" beside the
// target, lets the caller fill it, and fsyncs every file and directory in
// it. Commit then
//
//   - renames it to the target when nothing is there;
//   - otherwise exchanges the two names in one step (renameat2
//     RENAME_EXCHANGE on Linux, renamex_np RENAME_SWAP on macOS), so the
//     target always holds the old tree or the new one, and removes the old
//     tree, which is now at the temporary name;
//   - where names cannot be exchanged (other platforms, file systems that
//     refuse it), renames the old tree aside to ".NAME.old-<digits>", the
//     new one into place, and removes the old one. A crash between those
//     two renames leaves no tree at the target; this fallback is the only
//     case where that can happen.
//
// Leftovers of interrupted writes (a temporary file or tree, an old tree
// moved aside) are removed by the next write of the same target:
// StageDir calls RemoveLeftovers, which also renames an old tree back when
// a crash left the target empty. Callers writing single files call
// RemoveLeftovers themselves when they want the same.
//
// # Staging several files
//
// Config.Stage and Config.StageFunc do steps 1 to 3 and return a Staged
// file; Staged.Commit does steps 4 and 5 and Staged.Discard removes the
// temporary file instead. A caller replacing several files stages all of
// them first, so a failure while writing leaves every target unchanged.
//
// # Testing failures
//
// Config.CreateTemp, nil by default, replaces os.CreateTemp; a test returns
// a File whose Write, Sync or Close fails to simulate a full disk or a
// process killed mid-write. The seam is a parameter, not package state, so
// tests can run in parallel.
package atomicfile
