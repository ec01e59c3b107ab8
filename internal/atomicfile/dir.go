package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StageDir builds a directory that is to replace path: it removes the
// leftovers of earlier interrupted writes of path (RemoveLeftovers),
// creates a temporary directory beside path with mode perm, calls fill
// with its name, then fsyncs every file and directory under it. The
// returned Staged replaces path with it on Commit. On error nothing is
// left behind and path is untouched.
func (c Config) StageDir(path string, perm os.FileMode, fill func(dir string) error) (*Staged, error) {
	if err := RemoveLeftovers(path); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), leftoverPrefix(path, tmpTag))
	if err != nil {
		return nil, failed("create temporary directory for", path, err)
	}
	op := "write"
	err = fill(tmp)
	if err == nil {
		op, err = "chmod", os.Chmod(tmp, perm) // MkdirTemp makes 0700
	}
	if err == nil {
		op, err = "sync", syncTree(tmp)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, failed(op, path, err)
	}
	return &Staged{path: path, tmp: tmp, dir: true, o: c}, nil
}

// WriteDir replaces the directory (or file) at path with a tree that fill
// writes into the directory it is given, atomically: see the package
// documentation.
func WriteDir(path string, perm os.FileMode, fill func(dir string) error) error {
	return Config{}.WriteDir(path, perm, fill)
}

// WriteDir is the package-level WriteDir with c's settings: StageDir
// followed by Commit.
func (c Config) WriteDir(path string, perm os.FileMode, fill func(dir string) error) error {
	s, err := c.StageDir(path, perm, fill)
	if err != nil {
		return err
	}
	return s.Commit()
}

// commitDir puts the staged directory at s.path. When something is there
// already, the two are exchanged in one step (see the package
// documentation), so path always holds the old or the new tree; the old
// one, now at the temporary name, is then removed.
func (s *Staged) commitDir() error {
	parent := filepath.Dir(s.path)
	if _, err := os.Lstat(s.path); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(s.tmp, s.path); err != nil {
			os.RemoveAll(s.tmp)
			return failed("rename temporary directory to", s.path, err)
		}
		return syncDirErr(parent, s.path)
	}
	err := errors.ErrUnsupported
	if !s.o.noExchange {
		err = exchange(s.tmp, s.path)
	}
	if errors.Is(err, errors.ErrUnsupported) {
		return s.commitByRenames()
	}
	if err != nil {
		os.RemoveAll(s.tmp)
		return failed("exchange temporary directory with", s.path, err)
	}
	if s.o.crash("exchanged") {
		return errCrashed
	}
	// s.tmp now holds what was at s.path.
	if err := os.RemoveAll(s.tmp); err != nil {
		return fmt.Errorf("atomicfile: %s is in place; removing the previous tree (left at %s) failed: %w", s.path, s.tmp, err)
	}
	return syncDirErr(parent, s.path)
}

// commitByRenames is the fallback where the platform or file system cannot
// exchange two names: the old tree is renamed aside to ".NAME.old-*", the
// new one into place, and the old one removed. A crash between the two
// renames leaves no tree at path; the next StageDir or RemoveLeftovers of
// path renames the old tree back.
func (s *Staged) commitByRenames() error {
	old, err := reserveName(s.path, oldTag)
	if err != nil {
		os.RemoveAll(s.tmp)
		return failed("reserve a name beside", s.path, err)
	}
	if err := os.Rename(s.path, old); err != nil {
		os.RemoveAll(s.tmp)
		return failed("move aside", s.path, err)
	}
	if s.o.crash("moved-aside") {
		return errCrashed
	}
	if err := os.Rename(s.tmp, s.path); err != nil {
		rerr := os.Rename(old, s.path)
		os.RemoveAll(s.tmp)
		return failed("rename temporary directory to", s.path, errors.Join(err, rerr))
	}
	if s.o.crash("renamed") {
		return errCrashed
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("atomicfile: %s is in place; removing the previous tree (left at %s) failed: %w", s.path, old, err)
	}
	return syncDirErr(filepath.Dir(s.path), s.path)
}

// reserveName returns an unused name like a leftover of path with the
// given tag (os.Rename does not replace a directory, so the name is freed
// again before use; only one writer of path runs at a time).
func reserveName(path, tag string) (string, error) {
	name, err := os.MkdirTemp(filepath.Dir(path), leftoverPrefix(path, tag))
	if err != nil {
		return "", err
	}
	return name, os.Remove(name)
}

// syncTree fsyncs every regular file and directory under root, children
// before their directory.
func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			dirs = append(dirs, p)
			return nil
		case d.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			return errors.Join(f.Sync(), f.Close())
		}
		return nil
	})
	for i := len(dirs) - 1; err == nil && i >= 0; i-- {
		err = syncDir(dirs[i])
	}
	return err
}

func syncDirErr(dir, path string) error {
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("atomicfile: %s is in place, but syncing its directory failed, so it may not survive a crash: %w", path, err)
	}
	return nil
}
