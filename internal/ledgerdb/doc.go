// Package ledgerdb holds what the ledger package, its database drivers
// (ledger/postgres) and the ledger command share about stores: telling a
// PostgreSQL DSN from a path, redacting a DSN's password for messages, the
// bad-DSN error and the bound on one stored entry.
package ledgerdb
