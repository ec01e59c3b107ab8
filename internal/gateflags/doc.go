// Package gateflags holds the settings of a determinism gate in one test
// process: the -gate.* test flags, each with the environment variable
// used when the flag is not given, and the shard rule that assigns every
// scenario to exactly one shard of a CI matrix.
//
// Package gate documents the flags and the rule for users; this package
// registers and reads them (harness.Check) and checks a result file's
// shard (gate.ReadResults). It registers the flags only in test binaries
// (testing.Testing), so a command that links it has none.
package gateflags
