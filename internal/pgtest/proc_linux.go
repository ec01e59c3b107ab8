package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// runAs is the account the server runs as.
type runAs = syscall.Credential

// credential returns whom to run the server as: nil (the caller) unless
// the caller is root.
func credential(name string) (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses root: look up user %s to run it as: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: user %s: %w", name, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// sysProcAttr runs a server process as cred: Setpgid keeps a terminal's
// ^C for the test binary; Pdeathsig ends the server if the test binary
// dies without cleaning up.
func sysProcAttr(cred *runAs) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// handTo gives dir to cred's user, when there is one.
func handTo(dir string, cred *runAs) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("pgtest: hand %s to uid %d: %w", dir, cred.Uid, err)
	}
	return nil
}
