package cassettes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// The refresh lock of a cassette directory (see the package
// documentation, Applying re-recorded cassettes).
const (
	lockDirName  = ".refresh.lock"
	lockFileName = "lock"
	lockIgnore   = "# the refresh lock of this cassette directory (package cassettes)\n*\n"
)

// lockWait bounds how long a refresh waits for another refresh of the
// same directory; lockPoll is how often it tries again.
var (
	lockWait = time.Minute
	lockPoll = 10 * time.Millisecond
)

// DirLock is the refresh lock of one cassette directory, held: while it is
// held, no other DirLock of the directory, in this process or another,
// can be taken, so no other refresh stages, applies or recovers there.
// Apply, Recover, NewStage and a recording's save take it for their own
// duration; a refresh that records several cassettes, reviews them and
// applies them takes it once with [LockDir], so that what was reviewed is
// what is applied: [Apply] of cassettes staged by [DirLock.NewStage] runs
// under it, while every other refresh of the directory waits.
type DirLock struct {
	dir    string
	fl     *flock.Flock
	mu     sync.Mutex
	stages []string // made by newStage and not yet applied
	held   bool     // until Unlock
}

// LockDir takes dir's refresh lock (creating dir if needed), waiting
// while another refresh holds it, for at most a minute or until ctx is
// done. The lock is a file in the folder .refresh.lock in dir, which git
// ignores; it is an advisory lock (flock on Unix, LockFileEx on Windows),
// released by Unlock or when the process ends.
func LockDir(ctx context.Context, dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, newErr(dir, 0, "lock", err)
	}
	ld := filepath.Join(dir, lockDirName)
	if err := os.Mkdir(ld, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, newErr(ld, 0, "lock", err)
	}
	if fi, err := os.Lstat(ld); err != nil || !fi.IsDir() {
		return nil, newErr(ld, 0, "lock", fmt.Errorf("not a folder this package made (a link or a file): refusing to lock through it; remove it"))
	}
	// O_EXCL: never write through a link someone planted.
	if f, err := os.OpenFile(filepath.Join(ld, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm); err == nil {
		_, werr := f.WriteString(lockIgnore)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, newErr(ld, 0, "lock", werr)
		}
	}
	path := filepath.Join(ld, lockFileName)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, newErr(path, 0, "lock", fmt.Errorf("not a regular file: refusing to lock through it; remove it"))
	}
	fl := flock.New(path)
	// realSleep, not time.Sleep: a recording saved inside a
	// testing/synctest bubble still waits in real time.
	for waited := time.Duration(0); ; waited += lockPoll {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, newErr(path, 0, "lock", err)
		}
		if ok {
			return &DirLock{dir: dir, fl: fl, held: true}, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, newErr(dir, 0, "lock", fmt.Errorf("%w: another refresh of %s holds its lock (%s); nothing was changed", err, dir, path))
		}
		if waited >= lockWait {
			return nil, newErr(dir, 0, "lock", fmt.Errorf(
				"another refresh of %s (refresh-cassettes, an Apply, or a test recording with -%s) has held its lock (%s) for over %v; nothing was changed: wait for it to end, then run this again",
				dir, RecordFlag, path, lockWait))
		}
		realSleep(lockPoll)
	}
}

// lockDir is [LockDir] without a context.
func lockDir(dir string) (*DirLock, error) { return LockDir(context.Background(), dir) }

// NewStage is the package's NewStage, under l; Apply of cassettes staged
// there runs under l (see stageLock).
func (l *DirLock) NewStage() (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	stage, err := newStage(l.dir)
	if err != nil {
		return "", err
	}
	l.stages = append(l.stages, stage)
	liveStages.Lock()
	if liveStages.by == nil {
		liveStages.by = map[string]*DirLock{}
	}
	liveStages.by[stage] = l
	liveStages.Unlock()
	return stage, nil
}

// apply is the package's Apply, under l: the staged cassettes must be in
// a folder NewStage made in l's directory.
func (l *DirLock) apply(updates []Update, at string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := apply(l.dir, updates, at, nil)
	return err
}

// Recover is the package's Recover, under l. Staging folders that other
// processes (or other callers in this process) are still filling are left
// alone.
func (l *DirLock) Recover() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return recoverDir(l.dir, "")
}

// stageLock returns the held lock of dir whose NewStage made stage, or
// nil: Apply of cassettes staged there runs under that lock rather than
// waiting for it.
func stageLock(dir, stage string) *DirLock {
	liveStages.Lock()
	defer liveStages.Unlock()
	l := liveStages.by[stage]
	if l == nil || !l.held || filepath.Clean(l.dir) != filepath.Clean(dir) {
		return nil
	}
	return l
}

// Unlock removes the staging folders made through l that were not applied
// (nothing in the directory had changed because of them), then releases
// the lock. It reports the first folder it could not remove.
func (l *DirLock) Unlock() error {
	l.mu.Lock()
	stages := l.stages
	l.stages, l.held = nil, false
	l.mu.Unlock()
	var first error
	for _, s := range stages {
		if _, err := os.Lstat(s); errors.Is(err, fs.ErrNotExist) {
			releaseStage(s)
			continue
		}
		if _, err := os.Lstat(filepath.Join(s, journalName)); err == nil {
			// Decided but not completed: the next Recover rolls it forward.
			releaseStage(s)
			continue
		}
		if err := removeStage(s); err != nil && first == nil {
			first = err
		}
	}
	if err := l.fl.Unlock(); err != nil && first == nil {
		first = newErr(l.fl.Path(), 0, "lock", err)
	}
	return first
}

// withLock runs f holding dir's refresh lock.
func withLock(dir string, f func() error) error {
	l, err := lockDir(dir)
	if err != nil {
		return err
	}
	ferr := f()
	if err := l.fl.Unlock(); err != nil && ferr == nil {
		ferr = newErr(l.fl.Path(), 0, "lock", err)
	}
	return ferr
}

// liveStages holds the lock of every staging folder this process made and
// has not applied or removed: a staging folder whose lock is held belongs
// to a refresh still running, and Recover leaves it alone.
// by holds, for a staging folder made through a held DirLock, that lock.
var liveStages struct {
	sync.Mutex
	m  map[string]*flock.Flock
	by map[string]*DirLock
}

// holdStage takes stage's own lock, or reports that another refresh (in
// this process or another) holds it.
func holdStage(stage string) (bool, error) {
	liveStages.Lock()
	defer liveStages.Unlock()
	if _, ok := liveStages.m[stage]; ok {
		return false, nil
	}
	path := filepath.Join(stage, lockFileName)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return false, newErr(path, 0, "recover", fmt.Errorf("not a regular file: this staging folder was not made by a refresh; remove it"))
	}
	fl := flock.New(path, flock.SetPermissions(filePerm))
	ok, err := fl.TryLock()
	if err != nil {
		return false, newErr(path, 0, "recover", err)
	}
	if !ok {
		return false, nil
	}
	if liveStages.m == nil {
		liveStages.m = map[string]*flock.Flock{}
	}
	liveStages.m[stage] = fl
	return true, nil
}

// releaseStage releases stage's own lock if this process holds it.
func releaseStage(stage string) {
	liveStages.Lock()
	defer liveStages.Unlock()
	if fl, ok := liveStages.m[stage]; ok {
		fl.Close()
		delete(liveStages.m, stage)
		delete(liveStages.by, stage)
	}
}
