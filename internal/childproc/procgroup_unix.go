//go:build unix

package childproc

import (
	"errors"
	"os/exec"
	"syscall"
)

// groupAttr starts a child as the leader of its own process group, so the
// processes it starts can be found and killed with it.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills every process of the child's process group.
func killGroup(cmd *exec.Cmd) error { return killPgid(cmd.Process.Pid) }

func killPgid(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether a process of the group pgid is still running
// (or not yet reaped). Once its leader has been waited for, the group's id
// is not reused while any member lives, so a yes means a process the child
// started outlived it.
func groupAlive(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// groupsSupported says whether a child's own children are found and killed.
const groupsSupported = true
