// Package pgtest starts a throwaway PostgreSQL server for tests: initdb in
// a new temporary directory, the server on a free loopback port with
// trust authentication and its unix socket in that directory, and on Stop
// a fast shutdown, a wait for the process and the removal of the
// directory. Nothing is left running or on disk.
//
// PostgreSQL refuses to run as root, so when the caller is root the
// cluster and the server run as an unprivileged user ("nobody" unless
// Config.User or, for Start, CODEGENIE_PGTEST_USER says otherwise) through
// syscall.Credential, with the directory handed to that user.
//
// The binaries are found by Find: initdb on PATH, else the highest version
// under /usr/lib/postgresql/*/bin. Without them Start skips the test
// locally and fails it in CI (CI=true, or CODEGENIE_REQUIRE_POSTGRES=1),
// so CI never passes by skipping; .ci/run installs them.
//
// It is for tests only: trust authentication and fsync off are not
// settings for data anyone keeps.
package pgtest
