package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrFinished is returned by Staged.Commit on a file that was already
// committed or discarded.
var ErrFinished = errors.New("staged file already committed or discarded")

// File is what a write needs from a temporary file; *os.File has it. Name
// must be the file's path, as os.CreateTemp returns it.
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
	Name() string
}

// Options configures writes. The zero value writes with os.CreateTemp.
type Options struct {
	// CreateTemp creates the temporary file, as os.CreateTemp(dir,
	// pattern) does; nil means os.CreateTemp. It is a seam for tests that
	// inject write failures.
	CreateTemp func(dir, pattern string) (File, error)
}

// WriteFile replaces path with data, with mode perm, atomically: see the
// package documentation for the protocol. On error the previous file at
// path, if any, is unchanged and no temporary file is left.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Options{}.WriteFile(path, data, perm)
}

// WriteFile is the package-level WriteFile with o's options.
func (o Options) WriteFile(path string, data []byte, perm os.FileMode) error {
	s, err := o.Stage(path, data, perm)
	if err != nil {
		return err
	}
	return s.Commit()
}

// Stage writes data to a synced temporary file beside path, with mode perm,
// and returns it for Commit or Discard; path itself is not touched yet. On
// error nothing is left behind.
func (o Options) Stage(path string, data []byte, perm os.FileMode) (*Staged, error) {
	return o.StageFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// StageFunc is Stage for data produced by a writer: fill writes the new
// contents to w. If fill returns an error, the temporary file is removed
// and the error is returned wrapped.
func (o Options) StageFunc(path string, perm os.FileMode, fill func(w io.Writer) error) (*Staged, error) {
	create := o.CreateTemp
	if create == nil {
		create = osCreateTemp
	}
	f, err := create(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, failed("create temporary file for", path, err)
	}
	name := f.Name()
	op := "write"
	err = fill(f)
	if err == nil {
		op, err = "chmod", os.Chmod(name, perm)
	}
	if err == nil {
		op, err = "sync", f.Sync()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		op, err = "close", cerr
	}
	if err != nil {
		os.Remove(name)
		return nil, failed(op, path, err)
	}
	return &Staged{path: path, tmp: name}, nil
}

// Staged is a synced temporary file waiting to replace its target. It is
// not safe for concurrent use.
type Staged struct {
	path, tmp string
	done      bool
}

// Commit renames the temporary file over the target and syncs the
// directory (best effort). If the rename fails, the temporary file is
// removed and the target is unchanged. Commit after Commit or Discard
// returns ErrFinished.
func (s *Staged) Commit() error {
	if s.done {
		return fmt.Errorf("atomicfile: commit %s: %w", s.path, ErrFinished)
	}
	s.done = true
	if err := os.Rename(s.tmp, s.path); err != nil {
		os.Remove(s.tmp)
		return failed("rename temporary file to", s.path, err)
	}
	syncDir(filepath.Dir(s.path))
	return nil
}

// Discard removes the temporary file, leaving the target unchanged. It does
// nothing after Commit or Discard, so `defer s.Discard()` is safe.
func (s *Staged) Discard() {
	if s.done {
		return
	}
	s.done = true
	os.Remove(s.tmp)
}

func osCreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

func failed(op, path string, err error) error {
	return fmt.Errorf("atomicfile: %s %s: %w; the previous file is unchanged", op, path, err)
}

// syncDir makes a rename durable where the platform allows it; some
// platforms cannot sync a directory, so errors are ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
