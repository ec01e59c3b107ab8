package childproc

import (
	"os"
	"path/filepath"
)

// Faults are refusals a machine may give a gate's children, for tests of
// how a gate degrades when it meets them.
type Faults struct {
	// NoExec: the temporary directory does not allow running the test
	// binary (mounted noexec), so the executable path is not varied.
	NoExec bool
	// NoUnshare: the kernel refuses the starting thread a umask of its
	// own (unshare CLONE_FS), so the umask is not varied (Linux).
	NoUnshare bool
	// NoUTS: the kernel refuses every new UTS namespace, so the hostname
	// and domain name are not varied (Linux).
	NoUTS bool
}

// Inject makes every child this process starts meet f's refusals, and
// forgets what earlier children found, until restore is called. It is
// for tests, which must not start children concurrently with it.
func Inject(f Faults) (restore func()) {
	oldLink := linkExecutable
	if f.NoExec {
		linkExecutable = func(base, exe string) (string, error) {
			p := filepath.Join(base, filepath.Base(exe))
			return p, os.WriteFile(p, []byte("not to be run"), 0o600)
		}
	}
	undo := injectOS(f)
	forget := func() {
		exeRefused = refusal{}
		forgetOS()
	}
	forget()
	return func() {
		linkExecutable = oldLink
		undo()
		forget()
	}
}
