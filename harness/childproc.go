package harness

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// runInGroup starts cmd with start, which starts it as the leader of its
// own process group where the OS has groups (see groupAttr), copies its
// stdout and stderr to out, waits for it, and then kills what is left of
// its group: no process the child started outlives it. left describes
// those processes (nil when none was left); werr is cmd.Wait's error and
// err says the child did not start.
func runInGroup(cmd *exec.Cmd, out io.Writer, start func() error) (werr error, left []string, err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	err = start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, nil, err
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
	return werr, left, nil
}

// leftText is the detail of a child that left processes running.
func leftText(left []string) string {
	return fmt.Sprintf("left %s running after it ended (killed with its process group); a scenario must wait for every process it starts", strings.Join(left, ", "))
}
