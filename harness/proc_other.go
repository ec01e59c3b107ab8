//go:build !linux

package harness

import "os/exec"

func affinity() []int { return nil }

// affinityNote says why children's CPU count is not varied here.
const affinityNote = "CPU affinity is set only on Linux"

func setChildHostname(spec *childSpec) error {
	if spec.Hostname == "" {
		return nil
	}
	return errNotNewUTS
}

func startChild(cmd *exec.Cmd, _ []int, _ bool, setEnv func(newUTS bool)) error {
	cmd.SysProcAttr = groupAttr()
	setEnv(false)
	return cmd.Start()
}

func hostnameSupport() (bool, string) {
	return false, "new UTS namespaces exist only on Linux"
}

func utsNamespace() string { return "" }

// groupMembers is not known here (no /proc).
func groupMembers(int) []string { return nil }
