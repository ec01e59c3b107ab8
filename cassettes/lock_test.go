package cassettes

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/stretchr/testify/require"
)

// raceChildEnv makes the test binary a refresh that applies the cassette
// file raceSrcEnv names into raceDirEnv's directory raceN times, as
// "<prefix><k>.yaml", printing "ok NAME" or "err NAME: ERROR" per apply.
const (
	raceChildEnv = "CASSETTES_RACE_PREFIX"
	raceSrcEnv   = "CASSETTES_RACE_SRC"
	raceDirEnv   = "CASSETTES_RACE_DIR"
	raceN        = 10
)

// applyCopy stages a copy of src as name in dir and applies it, forced
// (several appliers may replace the same file).
func applyCopy(dir, src, name string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	stage, err := NewStage(dir)
	if err != nil {
		return err
	}
	staged := filepath.Join(stage, name)
	if err := writeFileAtomic(staged, b, nil); err != nil {
		return err
	}
	err = Apply(dir, []Update{{File: name, Staged: staged, Force: true, Reason: "race"}}, "")
	return err
}

func raceChild(prefix string) int {
	dir, src := os.Getenv(raceDirEnv), os.Getenv(raceSrcEnv)
	for k := range raceN {
		name := fmt.Sprintf("%s%d.yaml", prefix, k)
		if err := applyCopy(dir, src, name); err != nil {
			fmt.Printf("err %s: %v\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Printf("ok %s\n", name)
	}
	return 0
}

// TestConcurrentAppliesAreSerialised: 4 processes and 4 goroutines each
// apply 10 cassettes to one directory at once (every one also replacing
// a shared cassette). Every apply succeeds, the manifest lists each
// cassette an apply said it applied, with an intact history, Verify
// passes, and no staging folder is left. With -short (make race) only
// the goroutines apply: the processes run in make test.
func TestConcurrentAppliesAreSerialised(t *testing.T) {
	procs := 4
	if testing.Short() {
		procs = 0
	}
	dir := t.TempDir()
	src := recordPlain(t, t.TempDir(), "src", echoServer(t), []plainReq{reqA})
	var (
		mu      sync.Mutex
		applied []string
		failed  []string
	)
	note := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasPrefix(line, "ok "):
			applied = append(applied, strings.TrimPrefix(line, "ok "))
		case line != "":
			failed = append(failed, line)
		}
	}
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), raceChildEnv+"="+fmt.Sprintf("proc%d-", p), raceSrcEnv+"="+src, raceDirEnv+"="+dir)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				note(fmt.Sprintf("process %d: %v: %s", p, err, stderr.String()))
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				note(sc.Text())
			}
		})
	}
	for g := range 4 {
		wg.Go(func() {
			for k := range raceN {
				for _, name := range []string{fmt.Sprintf("goroutine%d-%d.yaml", g, k), "shared.yaml"} {
					if err := applyCopy(dir, src, name); err != nil {
						note(fmt.Sprintf("err %s: %v", name, err))
						continue
					}
					if name != "shared.yaml" {
						note("ok " + name)
					}
				}
			}
		})
	}
	wg.Wait()
	require.Empty(t, failed)
	require.Len(t, applied, (procs+4)*raceN)
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	require.NoError(t, err)
	var listed []string
	for _, e := range m.Cassettes {
		if e.File != "shared.yaml" {
			listed = append(listed, e.File)
		}
	}
	slices.Sort(applied)
	require.Equal(t, applied, listed)
	require.NoError(t, Verify(dir, VerifyConfig{}))
	left, _ := filepath.Glob(filepath.Join(dir, stagePrefix+"*"))
	require.Empty(t, left)
}

// shortLockWait bounds the wait for a held lock to 50ms for t.
func shortLockWait(t *testing.T) {
	prevWait := lockWait
	lockWait = 50 * time.Millisecond
	t.Cleanup(func() { lockWait = prevWait })
}

// TestLockWaitIsBounded: while another holder keeps a directory's lock, a
// second refresh waits the bound, then fails saying who holds it and that
// nothing was changed; once released, it proceeds.
func TestLockWaitIsBounded(t *testing.T) {
	shortLockWait(t)
	dir := t.TempDir()
	staged := stage(t, dir, "s.happy", []plainReq{reqA})
	held, err := LockDir(context.Background(), dir)
	require.NoError(t, err)
	before := dirSnapshot(t, dir)
	err = Apply(dir, []Update{{File: "s.happy.yaml", Staged: staged}}, "")
	require.ErrorContains(t, err, "another refresh of "+dir)
	require.ErrorContains(t, err, "nothing was changed")
	require.ErrorContains(t, err, filepath.Join(dir, lockDirName, lockFileName))
	require.Equal(t, before, dirSnapshot(t, dir))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = LockDir(ctx, dir)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, held.Unlock())
	err = Apply(dir, []Update{{File: "s.happy.yaml", Staged: staged}}, "")
	require.NoError(t, err)
	require.NoError(t, Verify(dir, VerifyConfig{}))
}

// TestHeldLockAppliesItsOwnStage: while a refresh holds a directory's
// lock with LockDir, Apply of a stage it made runs under it at
// once; Apply of any other stage waits for it; Unlock removes the stage
// it made and did not apply.
func TestHeldLockAppliesItsOwnStage(t *testing.T) {
	shortLockWait(t)
	dir := t.TempDir()
	other := stage(t, dir, "o.happy", []plainReq{reqA})
	held, err := LockDir(context.Background(), dir)
	require.NoError(t, err)
	own, err := held.NewStage()
	require.NoError(t, err)
	src, err := os.ReadFile(other)
	require.NoError(t, err)
	require.NoError(t, writeFileAtomic(filepath.Join(own, "s.happy.yaml"), src, nil))
	err = Apply(dir, []Update{{File: "s.happy.yaml", Staged: filepath.Join(own, "s.happy.yaml")}}, "")
	require.NoError(t, err)
	err = Apply(dir, []Update{{File: "o.happy.yaml", Staged: other}}, "")
	require.ErrorContains(t, err, "another refresh of "+dir)
	unapplied, err := held.NewStage()
	require.NoError(t, err)
	require.NoError(t, held.Unlock())
	require.NoDirExists(t, unapplied)
	err = Apply(dir, []Update{{File: "o.happy.yaml", Staged: other}}, "")
	require.NoError(t, err)
	require.NoError(t, Verify(dir, VerifyConfig{}))
}

// raceChildMain runs raceChild when the environment asks for it.
func raceChildMain() (int, bool) {
	prefix := os.Getenv(raceChildEnv)
	if prefix == "" {
		return 0, false
	}
	return raceChild(prefix), true
}
