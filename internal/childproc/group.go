package childproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// runInGroup starts a child with start, which starts it with its stdout
// and stderr on w as the leader of its own process group where the OS
// has groups (see groupAttr) and with mark (markVar=nonce) in its
// environment, copies its output to out, waits for it, and then kills
// what is left of its group and, where processes are found by their
// mark, every process whose environment holds mark, whatever session or
// group it moved to: no process the child started outlives it. cmd is
// the child started; left describes those processes (nil when none was
// left); werr is cmd.Wait's error and err says the child did not start.
func runInGroup(out io.Writer, mark string, start func(w *os.File) (*exec.Cmd, error)) (cmd *exec.Cmd, werr error, left []string, err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd, err = start(pw)
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, nil, nil, err
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()
	werr = cmd.Wait()
	pgid := cmd.Process.Pid
	var procs []proc
	alive := groupAlive(pgid)
	if alive {
		procs = groupMembers(pgid)
		_ = killPgid(pgid)
	}
	for _, p := range killMarked(mark) {
		if !slices.ContainsFunc(procs, func(q proc) bool { return q.pid == p.pid }) {
			procs = append(procs, p)
		}
	}
	left = leftNames(procs, pgid)
	if alive && len(left) == 0 {
		left = []string{"a process of its group"}
	}
	// A process that left the group (setsid) may still hold the pipe.
	t := time.NewTimer(time.Second)
	select {
	case <-copied:
	case <-t.C:
	}
	t.Stop()
	pr.Close()
	<-copied
	return cmd, werr, left, nil
}

// maxLeftNames bounds the processes a leak names.
const maxLeftNames = 10

// leftNames describes the processes procs a child whose group is pgid
// left running: "pid 12 (sleep)", "pid 13 (sleep, outside its process
// group)", at most maxLeftNames of them, then how many more.
func leftNames(procs []proc, pgid int) []string {
	var out []string
	for i, p := range procs {
		if i == maxLeftNames {
			out = append(out, fmt.Sprintf("%d more", len(procs)-i))
			break
		}
		where := ""
		if p.pgrp != pgid {
			where = ", outside its process group"
		}
		out = append(out, fmt.Sprintf("pid %d (%s%s)", p.pid, p.comm, where))
	}
	return out
}

// leftText is the detail of a child that left processes running.
func leftText(left []string) string {
	return fmt.Sprintf("left %s running after it ended (killed); a scenario must wait for every process it starts", strings.Join(left, ", "))
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.ToValidUTF8(string(t.b), "\uFFFD")
	if t.cut {
		s = "[...]" + s
	}
	return s
}
