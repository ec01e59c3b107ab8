// Package ledger is the append-only, tamper-evident history of gate
// verdicts: one entry per verdict (per scenario and path), chained by
// hash, with the verify, rerun and flake-count operations that read it. It keeps the claim "a pinned run key gives byte-identical outcomes"
// checkable across months and across CI runners.
//
// It is not a database, a scheduler or a place for evidence: entries point
// at evidence bundles, they do not hold them. It knows nothing of the
// harness: an [Entry] is plain data any gate can fill (its outcome is a
// gate.Outcome, the definition a gate's report and result file share),
// and re-evaluation goes through [RerunConfig.Evaluate] (cmd/ledger's
// runs the entry's Go test through the gate). A gate's verdicts reach a
// ledger from its result files: cmd/gate-merge -ledger appends them.
//
// # Entries
//
// An [Entry] is encoded as its canonical JSON (events.Canonical: keys
// sorted, no insignificant space, empty optional members omitted). Members:
//
//	schema         entry schema version: 2, or 1 for an entry written
//	               before the outcome had its own definition (its
//	               members are those marked 1 below)
//	seq            1, 2, 3, ... gapless, assigned by Append
//	kind           "verdict" (Append's default) | "replay" | "admin"
//	scenario, path what was gated (1)
//	key            the run key; components: its named component strings (1)
//	verdict        "PASS" | "NONDETERMINISTIC" | "BROKEN" (1)
//	classes        [{runs, output_digest, chain_digest, error, first_run,
//	               in_process, key, events, message}]: the runs grouped
//	               by outcome; error is the error kind (1: the first four)
//	runs           runs made (1)
//	output_digest, chain_digest  hex blake3 digests of the largest class (1)
//	revision       the code revision; ci_job the CI job identity (1)
//	evidence       where the evidence bundle was written (1)
//	test, package  the Go test (go test -run form, subtests with /) and
//	               the package directory relative to the module root that
//	               produced it: what a rerun runs again (1)
//	import_path, iterations, process_runs, floor, events, skipped,
//	failure, explanation, causes, commands
//	               the rest of the gate's outcome (gate.Outcome and the
//	               package gate documents each)
//	replays        (kind replay) the seq of the entry the rerun re-evaluated (1);
//	replay         {status, moved, differs, error}: what it found; status
//	               "same" | "diverged" | "not_comparable" | "error" (1)
//	admin          (kind admin) {action "retain", dropped_from,
//	               dropped_to, boundary, reason} (1)
//	recorded_at    RFC 3339 UTC, microseconds: set once by Append from the
//	               store's clock (Config.Now); the only clock any later
//	               evaluation consults (1)
//	prev           the previous entry's hash ("" for entry 1) (1)
//	hash           hex blake3 of the canonical bytes without "hash" (1)
//
// Entries of both schemas are read strictly and read back byte for byte
// (ledger/testdata holds a ledger of each).
// An entry is at most 1 MiB. Readers treat every ledger as
// untrusted: lines and rows are read one at a time and bounded, so memory
// stays bounded whatever a ledger holds. Rerun turns an entry's package
// and test into go test's arguments, so Append refuses, and every reader
// ([Store.Entries], [Store.Verify]) refuses at its seq, an entry of any
// schema whose package is not ".", ./DIR or an import path
// (module.CheckImportPath: never starting with "-", no ".." element, no
// "..." pattern), whose test is not a Go test's name (TestX with
// /subtest elements of printable characters other than a space), or
// whose evidence starts with "-" or holds a control character.
//
// # Text
//
// Both stores keep exactly the same entries, byte for byte: PostgreSQL's
// text and jsonb hold neither NUL nor invalid UTF-8, so Append (and
// Retain's admin entry) makes every string of an entry valid UTF-8
// without NUL before sealing it, by one rule: each NUL, and each byte
// that is not part of a valid UTF-8 encoding, is replaced by U+FFFD; every
// other byte is kept. The entry Append returns is the entry as stored, the
// hash covers the stored form, and Entries returns it unchanged from
// either store. Replacing rather than escaping: an escape needs an escape
// character that must then be escaped itself, which would rewrite every
// backslash of a Windows path or an error message; encoding/json already
// replaced invalid bytes this way, so only NUL is stored differently than
// before; and what is lost, which odd byte it was, is never a name (a
// test, package or evidence path holding one is refused, see Entries
// above), only text for people. Two component names that become the same
// are refused rather than merged. Entries stored before this rule, which
// may hold "\u0000", still verify: the rule applies when an entry is
// sealed, never when it is read.
//
// # Stores
//
// [Open] takes a DSN: a URL opens the store of a driver package the
// program imports (which registers its scheme, as database/sql drivers
// do); anything else is the path of an embedded store. The
// PostgreSQL store is package ledger/postgres, linked only by programs
// that import it (cmd/ledger does; a gated test that wants it adds
// import _ "github.com/codegenie/codegenie/ledger/postgres"), so a
// program that only uses the embedded store links no database driver.
//
// The embedded store is one file of entries, one canonical JSON object a
// line. Append takes an exclusive lock (gofrs/flock: flock(2), or
// LockFileEx on Windows) on a lock file beside it (its path plus ".lock",
// created once and never removed), reads the head from the last line
// (cached while the file has not changed), writes the line in one
// write(2) and fsyncs before releasing the lock, so appenders in any
// number of processes and handles serialise. An appender (or reader)
// whose context can end waits for the lock by trying again (every 1 to
// 4 ms) until it ends, so a lock never released fails the append when its
// context does. It needs no server. SQLite
// (modernc.org/sqlite, pure Go) was weighed against it: it would bring
// transactions but a large dependency, a file format people cannot read
// with a text editor, and no append-only guarantee of its own either,
// since whoever can write the file can rewrite it; in both, tamper
// evidence comes from the chain. A reader reads up to the length the file
// had when it looked, so it never sees a partial line. An append that
// fails part-way (a full disk, a file size limit) truncates its partial
// line before releasing the lock. A file that does not end in a newline
// (an append killed part-way) is refused for appending and reported by
// Verify until [Config.Repair] (ledger repair) drops the torn line, logging
// it with its bytes beside the ledger (path plus ".repairs"); Repair never
// removes a complete line: a last line cut only before its newline that is
// an entry of any schema, sealed (canonical bytes matching its hash) and
// chained (seq and prev following the line before), is completed instead. The store never opens its lock file or its
// repair log through a symbolic link, nor the ledger file for writing:
// O_NOFOLLOW where the system has it, an Lstat before opening and a check
// after it that the open file is the regular file the path names (what
// stands on Windows); a link or anything but a regular file there is
// refused, naming it, and its target is neither created nor changed.
//
// PostgreSQL is for runners that share one ledger; package ledger/postgres
// documents its table, triggers and roles. The database itself refuses
// any row that does not continue the chain, and any edit.
//
// # Retention
//
// Nothing is ever deleted except by [Store.Retain], which drops the entries
// before a seq and appends an admin entry recording the range, the hash of
// the last dropped entry (the boundary the first kept entry names as prev)
// and the reason, in one act. The embedded store rewrites its file
// atomically under the lock; PostgreSQL calls a procedure only its admin
// role may execute.
//
// # Verify
//
// [Store.Verify] reads every record and reports, by seq: a record that is not a
// readable entry, bytes that are not canonical, a hash that does not match
// the content, a gap or repeat in the sequence, a prev that is not the
// previous hash, schema violations, and missing first entries that no
// retention records. A row edited by a superuser with the triggers
// disabled and a byte flipped in the embedded file are found at their seq.
// Entries of a schema version this package does not know (it knows 1
// and 2), and a ledger that mixes such a version with others, are
// warnings, not failures. The report keeps the first
// 100 problems, warnings and schema versions, each message cut to
// 300 bytes, and counts the rest, so neither memory nor output grows
// with a hostile ledger. A cut tail cannot be seen
// from the chain alone: keep the reported head hash elsewhere to detect it.
//
// # Reruns and flakes
//
// [Store.Rerun] re-evaluates verdict entries through
// [RerunConfig.Evaluate] and compares when the key has not moved
// (verdict, output and chain digests); when it moved the entry is not
// comparable and the moved components are named. Every re-evaluation is
// appended as a rerun entry pointing at the original; nothing is
// modified.
//
// A rerun entry is stored with kind "replay" and the members replays and
// replay: schema 1's names for it, which this package keeps writing (in
// Go they are [Entry.RerunOf] and [Entry.Rerun]). Runners of different
// versions share one ledger, and every version reads schema 1 strictly:
// a kind or member it does not know is a problem at its seq, and the
// PostgreSQL row states the kind in a column of its own. So a new word
// would need a new schema version, and the stored word is only data;
// what this package prints says rerun. [Store.Flakes] tallies PASS, NONDETERMINISTIC and BROKEN
// verdicts per scenario and path with the first and last seq of each; a verdict it does not know and an entry of a schema it does not
// know (both written by a newer version) are counted and reported, never
// guessed at.
package ledger
