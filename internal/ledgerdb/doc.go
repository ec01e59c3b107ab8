// Package ledgerdb holds what the ledger package, its database drivers
// (ledger/postgres) and the ledger command share about stores: the
// driver interface ([Backend]) and registry ([Register]), telling a
// PostgreSQL DSN from a path, redacting a DSN's password for messages, the
// bad-DSN error and the bound on one stored entry. The drivers live in this
// module; the registry is not a public extension point.
package ledgerdb
