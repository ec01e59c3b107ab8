//go:build !linux

package childproc

import (
	"os/exec"
	"runtime"
)

func affinity() []int { return nil }

// affinityNote says why children's CPU count is not varied here.
const affinityNote = "CPU affinity is set only on Linux"

// SetHostname fails when spec asks for a hostname: new UTS namespaces
// exist only on Linux.
func (spec *Spec) SetHostname() error {
	if spec.Hostname == "" && spec.Domain == "" {
		return nil
	}
	return errNotNewUTS
}

// DomainName is the NIS domain name, known only on Linux.
func DomainName() string { return "" }

// umaskNote says why children's umask is not varied here.
func umaskNote() string {
	if runtime.GOOS == "windows" {
		return "Windows has no umask"
	}
	return "set only on Linux, where the thread that starts a child can have a umask of its own (elsewhere the umask is the whole test process's)"
}

func processUmask() int { return -1 }

// UmaskText renders the process umask, known only on Linux.
func UmaskText() string { return "" }

func startChild(mk func(newUTS bool) *exec.Cmd, _ []int, _ int, _ bool) (*exec.Cmd, error) {
	cmd := mk(false)
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// hostnameSupport says children cannot get their own hostname here, and
// why.
func hostnameSupport() (bool, string) {
	return false, "new UTS namespaces exist only on Linux"
}

func utsNamespace() string { return "" }
