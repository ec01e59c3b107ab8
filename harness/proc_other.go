//go:build !linux

package harness

import (
	"os/exec"
	"runtime"
)

func affinity() []int { return nil }

// affinityNote says why children's CPU count is not varied here.
const affinityNote = "CPU affinity is set only on Linux"

func setChildHostname(spec *childSpec) error {
	if spec.Hostname == "" && spec.Domain == "" {
		return nil
	}
	return errNotNewUTS
}

func domainName() string { return "" }

// umaskNote says why children's umask is not varied here.
func umaskNote() string {
	if runtime.GOOS == "windows" {
		return "Windows has no umask"
	}
	return "set only on Linux, where the thread that starts a child can have a umask of its own (elsewhere the umask is the whole test process's)"
}

func processUmask() int { return -1 }

func umaskText() string { return "" }

func startChild(mk func(newUTS bool) *exec.Cmd, _ []int, _ int, _ bool) (*exec.Cmd, error) {
	cmd := mk(false)
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

func hostnameSupport() (bool, string) {
	return false, "new UTS namespaces exist only on Linux"
}

func utsNamespace() string { return "" }

// groupMembers is not known here (no /proc).
func groupMembers(int) []string { return nil }
