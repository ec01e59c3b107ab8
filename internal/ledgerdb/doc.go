// Package ledgerdb holds what the ledger package, its database drivers
// (ledger/postgres) and the commands that append to a ledger (cmd/ledger,
// cmd/gate-merge) share.
//
// About stores: the driver interface ([Backend]) and registry
// ([Register]), telling a PostgreSQL DSN from a path, redacting a DSN's
// password for messages, the bad-DSN error and the bound on one stored
// entry. The drivers live in this module; the registry is not a public
// extension point.
//
// About where an entry comes from: the code revision under test
// ([Revision], [BuildRevision]) and the CI job ([CIJob]) that the
// commands record in the entries they append (ledger.Entry.Revision and
// CIJob), read from the binary's build information and the variables CI
// systems set.
package ledgerdb
