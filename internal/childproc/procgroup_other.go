//go:build !unix

package childproc

import (
	"os/exec"
	"syscall"
)

// groupAttr is nil here: there are no process groups to start a child in.
// (A Windows job object would give one; the harness does not use them.)
func groupAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the child alone: processes it started are not found.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func killPgid(int) error { return nil }

func groupAlive(int) bool { return false }

// groupsSupported says whether a child's own children are found and killed.
const groupsSupported = false
