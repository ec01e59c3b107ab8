// Package postgres is the PostgreSQL store of the verdict ledger
// ([github.com/codegenie/codegenie/ledger]), for CI runners that share one
// ledger. Importing it makes [github.com/codegenie/codegenie/ledger.Open]
// open postgres:// and postgresql:// DSNs; a program that does not import
// it links no database driver:
//
//	import _ "github.com/codegenie/codegenie/ledger/postgres"
//
// [Install] creates, in the current schema, the table codegenie_ledger
// (seq primary key, prev and hash unique, kind, scenario, recorded_at,
// body: the canonical bytes) and two roles: [AppRole] may only SELECT and
// INSERT, [AdminRole] may SELECT and call the retention procedure.
//
// The database enforces the chain, whoever inserts: a BEFORE INSERT
// trigger takes the append lock and refuses any row that is not the next
// seq after the head with prev equal to the head's hash (on an empty
// table, seq 1 with no prev), whose hash is not 64 hex digits, whose body
// is not a JSON object of at most 1 MiB, or whose body
// does not state the row's seq, prev, hash, kind and scenario. So no row
// the app role inserts can make the next honest append fail. What the
// database cannot check is the blake3 hash of the canonical bytes: a
// well-formed row whose hash does not match its content is accepted, and
// the ledger's Store.Verify (ledger verify) names it at its seq while
// later appends chain on as usual.
// BEFORE UPDATE, DELETE and TRUNCATE triggers raise, so that not even the
// owner edits a row by accident. Append runs in a transaction holding the
// same transaction-scoped advisory lock: read the head, insert after it.
//
// No append waits forever. Each transaction that takes the lock first
// sets, with SET LOCAL, lock_timeout (default 30s: the longest an append
// waits for the lock), statement_timeout (default 60s: any one statement)
// and idle_in_transaction_session_timeout (default 10s: an appender that
// stops inside its transaction, a paused CI job or a lost network, has
// its session ended by the server, which releases the lock). A DSN
// parameter of the same name sets another value, in PostgreSQL's units
// (postgres://ci@db/ledger?lock_timeout=5s; 0 turns a bound off), which
// the server also applies to the whole session. An append whose wait for
// the lock ends unfulfilled fails naming the sessions that hold it, from
// pg_locks joined with pg_stat_activity: backend pid, state (visible for
// another role's session only to members of pg_read_all_stats), role and
// application, and the pg_terminate_backend call that ends each.
//
// Retention goes through codegenie_ledger_retain, a SECURITY DEFINER
// procedure only the admin role may execute, which checks the admin entry,
// inserts the entry after the head, disables the delete trigger, deletes,
// and re-enables it, in one transaction.
//
// Install is idempotent, and upgrades an install made by an older version
// in place (the entries are kept). An install without the enabled chain
// trigger is refused for appending and retention, with the command that
// upgrades it.
package postgres
