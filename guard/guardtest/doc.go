// Package guardtest holds the test helpers of package guard: it proves that
// a test makes no network connection.
//
// CountDials replaces, for the rest of the test, http.DefaultTransport with
// a transport that refuses and counts every dial, and net.DefaultResolver
// with a resolver whose DNS connections are refused and counted the same
// way, so that a net.Dial to a host name anywhere in the process is seen
// too. Attach the same counter to the run's context with
// guard.WithDialCounter so that dials through guard's replay transports are
// counted as well, and call NoDials at the end.
//
// It does not see a dial to an IP literal made directly with net.Dial or a
// private net.Dialer, nor name resolution by the cgo resolver. It is not
// for parallel tests: it swaps process-wide variables.
package guardtest
