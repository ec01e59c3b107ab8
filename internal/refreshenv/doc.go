// Package refreshenv is the protocol between a refresh of a module's
// cassettes (package cassettes/refresh) and the test binaries it runs:
// two environment variables that package cassettes reads once, in test
// binaries only, and the lines a listing run writes.
//
//	CODEGENIE_CASSETTES_LIST=FILE   every cassettes.Open appends one
//	                                Opened line (JSON) to FILE, and a
//	                                miss in replay a Missed line (each
//	                                line once)
//	CODEGENIE_CASSETTES_STAGE=DIR   recordings are saved to, and replays
//	                                read from when it exists, the staged
//	                                copy DIR/<path from the module root>
//
// Environment variables, not test flags: a test binary fails on a flag
// none of its packages defines, and a refresh runs the tests of packages
// that only link cassettes through another package. A user never sets
// them; the refresh does, and documents them in package cassettes.
//
// It is a package of its own because both sides import it: package
// cassettes in the test binaries and package cassettes/refresh, which
// imports cassettes, in the refresh.
package refreshenv
