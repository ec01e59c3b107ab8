//go:build !linux

package pgtest

import "syscall"

// runAs is the account the server runs as; outside Linux the server runs
// as the caller.
type runAs struct{}

// credential returns nil: the caller runs the server.
func credential(string) (*runAs, error) { return nil, nil }

// sysProcAttr is nil: the server runs as the caller, and is stopped by
// Stop (a test binary that dies may leave it running).
func sysProcAttr(*runAs) *syscall.SysProcAttr { return nil }

// handTo does nothing: the caller keeps dir.
func handTo(string, *runAs) error { return nil }
