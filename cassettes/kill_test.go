package cassettes

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// killChildEnv makes the test binary a refresh to be killed: it stages the
// cassettes of the folder the variable names into the directory
// killDirEnv names and applies them, slowly.
const (
	killChildEnv = "CASSETTES_KILLTEST_NEW"
	killDirEnv   = "CASSETTES_KILLTEST_DIR"
)

func TestMain(m *testing.M) {
	if src := os.Getenv(killChildEnv); src != "" {
		os.Exit(killChild(src, os.Getenv(killDirEnv)))
	}
	if code, ok := raceChildMain(); ok {
		os.Exit(code)
	}
	// No test leaves a goroutine behind: replay starts none, and test
	// servers and child processes are waited for.
	goleak.VerifyTestMain(m)
}

// killChild is one refresh run: record (copy) into a staging folder, then
// apply, pausing between steps so kills land everywhere.
func killChild(src, dir string) int {
	pause := func() { time.Sleep(2 * time.Millisecond) }
	applyStep = pause
	fmt.Println("started") // the parent times its kill from here
	stage, err := NewStage(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ents, _ := os.ReadDir(src)
	var ups []Update
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		pause()
		if err := writeFileAtomic(filepath.Join(stage, e.Name()), b, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ups = append(ups, Update{File: e.Name(), Staged: filepath.Join(stage, e.Name()), Force: true, Reason: "kill test"})
	}
	if err := Apply(dir, ups, "2026-11-22T00:00:00Z"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestApplySurvivesKills kills a refresh (this test binary re-executed)
// with SIGKILL at 30 random moments. After each kill, Verify sees every
// cassette and the manifest all old or all new, or reports the interrupted
// apply naming the repair command; git sees no new file; and the next run
// (Recover) leaves the new state with no staging folder or temporary file.
func TestApplySurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary 31 times")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	base := t.TempDir()
	oldDir := filepath.Join(base, "old")
	names := []string{"a.happy.yaml", "b.happy.yaml", "c.happy.yaml", "d.happy.yaml"}
	var ups []Update
	for i, n := range names {
		ups = append(ups, Update{File: n, Staged: stage(t, oldDir, strings.TrimSuffix(n, ".yaml"),
			[]plainReq{{method: "POST", path: "/v1/messages", body: fmt.Sprintf(`{"old":%d}`, i)}})})
	}
	err := Apply(oldDir, ups, "")
	require.NoError(t, err)
	newSrc := filepath.Join(base, "new")
	require.NoError(t, os.Mkdir(newSrc, 0o755))
	for i, n := range append(names, "e.happy.yaml") {
		p := recordPlain(t, newSrc, strings.TrimSuffix(n, ".yaml"), echoServer(t),
			[]plainReq{{method: "POST", path: "/v1/messages", body: fmt.Sprintf(`{"new":%d}`, i)}})
		require.FileExists(t, p)
	}

	oldSnap := dirSnapshot(t, oldDir)
	run := func(dir string, killAfter time.Duration) (time.Duration, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+newSrc, killDirEnv+"="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line := make([]byte, len("started\n"))
		if _, err := io.ReadFull(stdout, line); err != nil {
			werr := cmd.Wait()
			t.Fatalf("the child did not start: %v, %v: %s", err, werr, stderr.String())
		}
		start := time.Now()
		if killAfter >= 0 {
			time.Sleep(killAfter)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		err = cmd.Wait()
		if killAfter < 0 && err != nil {
			return 0, fmt.Errorf("%v: %s", err, stderr.String())
		}
		return time.Since(start), nil
	}
	copyDir := func(name string) string {
		dir := filepath.Join(base, name)
		require.NoError(t, os.CopyFS(dir, os.DirFS(oldDir)))
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "old"}} {
			out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
		return dir
	}
	gitUntracked := func(dir string) string {
		out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
		require.NoError(t, err, "%s", out)
		var extra []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "??") && l != "?? e.happy.yaml" {
				extra = append(extra, l)
			}
		}
		return strings.Join(extra, "\n")
	}

	full := copyDir("full")
	took, err := run(full, -1)
	require.NoError(t, err)
	require.NoError(t, Verify(full, VerifyConfig{}))
	newSnap := dirSnapshot(t, full)
	require.NotEqual(t, oldSnap, newSnap)

	rng := rand.New(rand.NewPCG(20261122, 1))
	counts := map[string]int{}
	for i := range 30 {
		dir := copyDir(fmt.Sprintf("kill%02d", i))
		at := time.Duration(rng.Int64N(int64(took)))
		_, err := run(dir, at)
		require.NoError(t, err)
		state := func() string {
			switch snap := dirSnapshot(t, dir); {
			case equalSnap(snap, oldSnap):
				return "old"
			case equalSnap(snap, newSnap):
				return "new"
			}
			return "mixed"
		}
		verr := Verify(dir, VerifyConfig{})
		before := state()
		switch {
		case verr == nil:
			require.Contains(t, []string{"old", "new"}, before, "kill %d at %v: Verify passed on a mixed directory", i, at)
		default:
			require.ErrorIs(t, verr, ErrInterruptedApply, "kill %d at %v", i, at)
			require.ErrorContains(t, verr, recoverCommand(dir))
			before = "interrupted"
		}
		counts[before]++
		require.Empty(t, gitUntracked(dir), "kill %d at %v: git sees new files", i, at)

		require.NoError(t, Recover(dir), "kill %d at %v", i, at) // the next run
		require.NoError(t, Verify(dir, VerifyConfig{}))
		after := state()
		require.Contains(t, []string{"old", "new"}, after)
		if before == "interrupted" {
			require.Equal(t, "new", after, "an apply that had decided completes")
		} else {
			require.Equal(t, before, after)
		}
		left, _ := filepath.Glob(filepath.Join(dir, ".refresh-*"))
		tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
		require.Empty(t, append(left, tmps...), "kill %d at %v: left behind", i, at)
		require.Empty(t, gitUntracked(dir))
	}
	t.Logf("30 kills within the %v an uninterrupted refresh takes: %v", took, counts)
}

// equalSnap compares the tracked content of two directory snapshots.
func equalSnap(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
