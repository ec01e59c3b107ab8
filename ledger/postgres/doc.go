// Package postgres is the PostgreSQL store of the verdict ledger
// (package github.com/codegenie/codegenie/ledger), for CI runners that
// share one ledger. Importing it registers the postgres:// and
// postgresql:// schemes with [ledger.Open]; a program that does not import
// it links no database driver:
//
//	import _ "github.com/codegenie/codegenie/ledger/postgres"
//
// [Install] creates, in the current schema, the table codegenie_ledger
// (seq primary key, prev and hash unique, kind, scenario, recorded_at,
// body: the canonical bytes) and two roles: [AppRole] may only SELECT and
// INSERT, [AdminRole] may SELECT and call the retention procedure.
//
// BEFORE UPDATE, DELETE and TRUNCATE triggers raise, so that not even
// the owner edits a row by accident. Append runs in a transaction holding
// a transaction-scoped advisory lock: read the head, insert after it.
//
// Retention goes through codegenie_ledger_retain, a SECURITY DEFINER
// procedure only the admin role may execute, which checks the admin entry,
// disables the delete trigger, deletes, re-enables it and inserts the
// entry in one transaction.
//
// Install is idempotent.
package postgres
