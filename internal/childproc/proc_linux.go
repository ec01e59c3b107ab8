//go:build linux

package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// affinityNote is empty: children's CPU count is varied by affinity.
const affinityNote = ""

// affinity returns the CPUs the test process may run on.
func affinity() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// utsNamespace identifies the process's UTS namespace ("uts:[N]").
func utsNamespace() string {
	s, _ := os.Readlink("/proc/self/ns/uts")
	return s
}

// SetHostname renames the host and sets its domain name, as spec asks,
// inside the child's own UTS namespace, never in the test process's.
func (spec *Spec) SetHostname() error {
	if spec.Hostname == "" && spec.Domain == "" {
		return nil
	}
	if ns := utsNamespace(); ns == "" || ns == spec.UTS {
		return errNotNewUTS
	}
	if spec.Hostname != "" {
		if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
			return err
		}
	}
	if spec.Domain != "" {
		return unix.Setdomainname([]byte(spec.Domain))
	}
	return nil
}

// DomainName is the NIS domain name of the process's UTS namespace.
func DomainName() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Domainname[:])
}

// umaskRefused says why the kernel refused a thread of its own for a
// child's umask ("" while it never did); unshareFS makes one.
var (
	umaskRefused refusal
	unshareFS    = func() error { return unix.Unshare(unix.CLONE_FS) }
)

// umaskNote says why children's umask is not varied: "" unless the
// kernel refused (a seccomp profile may forbid unshare).
func umaskNote() string { return umaskRefused.get() }

// processUmask is the test process's umask, read from /proc (Linux 4.7
// and later); -1 when unknown. Reading it with umask(2) would change it
// for a moment in every thread.
func processUmask() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			if m, err := strconv.ParseInt(strings.TrimSpace(v), 8, 32); err == nil {
				return int(m)
			}
		}
	}
	return -1
}

// UmaskText renders the process umask in octal ("" when unknown).
func UmaskText() string {
	if m := processUmask(); m >= 0 {
		return fmt.Sprintf("%04o", m)
	}
	return ""
}

// Hostname support: children are started in a new UTS namespace, with a
// new user namespace when that is the only way the kernel allows it.
type utsMode int

const (
	utsUnknown utsMode = iota
	utsPlain           // CLONE_NEWUTS (needs CAP_SYS_ADMIN)
	utsUser            // CLONE_NEWUSER|CLONE_NEWUTS (unprivileged user namespaces)
	utsNone
)

var uts struct {
	sync.Mutex
	mode utsMode
	why  string
}

// sysProcAttr is how a child is started: in its own process group (so a
// kill reaches its own children) and in a new UTS namespace when mode asks
// for one. (No Pdeathsig: it fires when the forking thread ends, and the
// thread that sets a child's affinity ends right after the fork.)
func sysProcAttr(mode utsMode) *syscall.SysProcAttr {
	a := groupAttr()
	switch mode {
	case utsPlain:
		a.Cloneflags = syscall.CLONE_NEWUTS
	case utsUser:
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWUTS
		// Mapped to root inside, so the capabilities the new namespace
		// grants survive the exec.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	return a
}

// startChild starts cmd with the CPU affinity cpus (nil: unchanged), the
// umask (0: unchanged) and, when wantHost, in a new UTS namespace if the
// kernel allows one, and returns it. mk makes the command for each try
// (newUTS: the child has its own UTS namespace), since a Cmd starts
// once. The affinity and the umask are
// set on a locked thread that forks the child (which inherits both) and
// then exits with its goroutine, so no other goroutine ever runs on it;
// the umask after the thread stopped sharing its file system attributes
// with the others (unshare CLONE_FS), so the test process keeps its own.
// Where the kernel refuses that, the child keeps the test process's
// umask, and umaskNote says why.
func startChild(mk func(newUTS bool) *exec.Cmd, cpus []int, umask int, wantHost bool) (*exec.Cmd, error) {
	modes := []utsMode{0}
	if wantHost {
		modes = utsModes()
	}
	var err error
	for _, m := range modes {
		cmd := mk(m == utsPlain || m == utsUser)
		cmd.SysProcAttr = sysProcAttr(m)
		err = startPinnedFn(cmd, cpus, umask)
		if err == nil {
			if wantHost {
				noteUTS(m, "")
			}
			return cmd, nil
		}
		if m == 0 || !(errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
			return nil, err
		}
		noteUTS(utsUnknown, err.Error())
	}
	return nil, err
}

// utsModes lists the ways to try, best first, from what earlier children
// found.
func utsModes() []utsMode {
	uts.Lock()
	defer uts.Unlock()
	switch uts.mode {
	case utsPlain:
		return []utsMode{utsPlain}
	case utsUser:
		return []utsMode{utsUser}
	case utsNone:
		return []utsMode{0}
	}
	return []utsMode{utsPlain, utsUser, 0}
}

func noteUTS(m utsMode, why string) {
	uts.Lock()
	defer uts.Unlock()
	switch {
	case m == 0 && uts.mode == utsUnknown:
		uts.mode = utsNone
	case m != utsUnknown && m != 0:
		uts.mode = m
	}
	if why != "" {
		uts.why = "the kernel refused a new UTS namespace: " + why
	}
}

// hostnameSupport says whether children can get their own hostname, and
// why not. It is only known after a first child was started.
func hostnameSupport() (bool, string) {
	uts.Lock()
	defer uts.Unlock()
	return uts.mode != utsNone, uts.why
}

// startPinnedFn is startPinned; Inject replaces it.
var startPinnedFn = startPinned

func startPinned(cmd *exec.Cmd, cpus []int, umask int) error {
	if cpus == nil && umask == 0 {
		return cmd.Start()
	}
	done := make(chan error, 1)
	go pinAndStart(cmd, cpus, umask, done)
	return <-done
}

// pinAndStart is startPinned's goroutine: it locks its thread, gives it
// cpus and umask and starts cmd on it, and sends the error to done. The
// thread is never unlocked: it ends with the goroutine, so its changed
// mask and umask never run anything else. That is never the main
// thread: the kernel reports the main thread's umask as the process's
// (/proc/self/status), and Go keeps the main thread when a goroutine
// ends locked to it, so on it pinAndStart holds it while another thread
// does the work.
func pinAndStart(cmd *exec.Cmd, cpus []int, umask int, done chan<- error) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		other := make(chan error, 1)
		go pinAndStart(cmd, cpus, umask, other)
		done <- <-other
		runtime.UnlockOSThread()
		return
	}
	if umask != 0 {
		if err := unshareFS(); err != nil {
			umaskRefused.note("the kernel refused the starting thread a umask of its own (unshare CLONE_FS): " + err.Error())
		} else {
			unix.Umask(umask)
		}
	}
	if cpus == nil {
		done <- cmd.Start()
		return
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		done <- fmt.Errorf("harness: set CPU affinity %v: %w", cpus, err)
		return
	}
	done <- cmd.Start()
}
