package childproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// runInGroup starts a child with start, which starts it with its stdout
// and stderr on w as the leader of its own process group where the OS
// has groups (see groupAttr), copies its output to out, waits for it, and
// then kills what is left of its group: no process the child started
// outlives it. cmd is the child started; left describes those processes
// (nil when none was left); werr is cmd.Wait's error and err says the
// child did not start.
func runInGroup(out io.Writer, start func(w *os.File) (*exec.Cmd, error)) (cmd *exec.Cmd, werr error, left []string, err error) {
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
	if pgid := cmd.Process.Pid; groupAlive(pgid) {
		left = groupMembers(pgid)
		if len(left) == 0 {
			left = []string{"a process of its group"}
		}
		_ = killPgid(pgid)
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

// leftText is the detail of a child that left processes running.
func leftText(left []string) string {
	return fmt.Sprintf("left %s running after it ended (killed with its process group); a scenario must wait for every process it starts", strings.Join(left, ", "))
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
