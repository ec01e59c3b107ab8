package childproc

import (
	"os/exec"
	"syscall"
)

// injectOS makes the refusals of f that only Linux has.
func injectOS(f Faults) (undo func()) {
	oldUnshare, oldStart := unshareFS, startPinnedFn
	if f.NoUnshare {
		unshareFS = func() error { return syscall.EPERM }
	}
	if f.NoUTS {
		startPinnedFn = func(cmd *exec.Cmd, cpus []int, umask int) error {
			if cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWUTS != 0 {
				// Fails inside Start, with EPERM, as a refused clone
				// does: no process group of that id exists.
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: 1<<22 - 1}
				return cmd.Start()
			}
			return oldStart(cmd, cpus, umask)
		}
	}
	return func() { unshareFS, startPinnedFn = oldUnshare, oldStart }
}

// forgetOS forgets the umask refusal and the UTS namespace support that
// earlier children found.
func forgetOS() {
	umaskRefused = refusal{}
	uts.Lock()
	uts.mode, uts.why = utsUnknown, ""
	uts.Unlock()
}
