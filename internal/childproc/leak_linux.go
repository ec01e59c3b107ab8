//go:build linux

package childproc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// marksSupported says whether processes are found by their mark, here
// through /proc.
const marksSupported = true

// proc is a process as /proc/PID/stat shows it.
type proc struct {
	pid, pgrp int
	comm      string
}

// procStat reads process pid's stat; ok is false once it has ended.
func procStat(pid int) (p proc, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 3 {
		return proc{}, false
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return proc{}, false
	}
	return proc{pid: pid, pgrp: pgrp, comm: s[open+1 : end]}, true
}

// pids lists the processes /proc shows, but this one, in pid order.
func pids() []int {
	des, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var out []int
	for _, de := range des {
		if pid, err := strconv.Atoi(de.Name()); err == nil && pid != self {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// groupMembers lists the processes of the group pgid.
func groupMembers(pgid int) []proc {
	var out []proc
	for _, pid := range pids() {
		if p, ok := procStat(pid); ok && p.pgrp == pgid {
			out = append(out, p)
		}
	}
	return out
}

// maxEnviron bounds what is read of a process's environment: the kernel
// gives a program at most a quarter of its stack limit for its arguments
// and environment together, 6 MiB at most.
const maxEnviron = 8 << 20

// hasMark reports whether the environment process pid was started with
// holds the entry mark.
func hasMark(pid int, mark string) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false // ended, or another user's
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxEnviron))
	entry := []byte(mark + "\x00")
	return bytes.HasPrefix(b, entry) || bytes.Contains(b, append([]byte{0}, entry...))
}

// maxKillRounds bounds the searches for marked processes: each kills
// what it finds, so a later one finds only what was started meanwhile.
const maxKillRounds = 64

// killMarked kills every process whose environment holds mark, searching
// again until a search finds none, and returns them in the order found.
// A process is signalled through a pidfd opened before its mark is
// checked again, so a pid reused meanwhile is never signalled, and the
// next search starts once each has ended.
func killMarked(mark string) []proc {
	var found []proc
	seen := map[int]bool{}
	for range maxKillRounds {
		var fds []int
		marked := false
		for _, pid := range pids() {
			if !hasMark(pid, mark) {
				continue
			}
			marked = true
			if p, ok := procStat(pid); ok && !seen[pid] {
				seen[pid] = true
				found = append(found, p)
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				// No pidfd (before Linux 5.3, or refused): signal the
				// pid just checked.
				_ = syscall.Kill(pid, syscall.SIGKILL)
				continue
			}
			if hasMark(pid, mark) {
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			}
			fds = append(fds, fd)
		}
		if !marked {
			break
		}
		awaitEnd(fds)
	}
	return found
}

// awaitEnd waits until the process of each pidfd of fds has ended (its
// pidfd becomes readable then), a second at most, and closes them.
func awaitEnd(fds []int) {
	pfds := make([]unix.PollFd, len(fds))
	for i, fd := range fds {
		pfds[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	deadline := time.Now().Add(time.Second) //detvet:ignore bounds a wait for killed processes to end; nothing printed or digested reads it
	for len(pfds) > 0 {
		left := time.Until(deadline) //detvet:ignore as above
		if left <= 0 {
			break
		}
		n, err := unix.Poll(pfds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		pfds = slices.DeleteFunc(pfds, func(p unix.PollFd) bool { return p.Revents != 0 })
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
}
