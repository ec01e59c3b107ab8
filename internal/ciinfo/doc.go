// Package ciinfo reads what identifies a verdict's origin: the VCS
// revision the running binary was built from and the CI job it runs in.
// The gate, gate-merge and the ledger command record both in ledger
// entries.
package ciinfo
