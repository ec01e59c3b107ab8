package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
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

// Config configures writes. The zero value writes with os.CreateTemp.
type Config struct {
	// CreateTemp creates the temporary file, as os.CreateTemp(dir,
	// pattern) does; nil means os.CreateTemp. It is a seam for tests that
	// inject write failures.
	CreateTemp func(dir, pattern string) (File, error)

	// ReplaceDir lets a file replace a directory at its target (the
	// directory is removed after the exchange). Without it, a file write
	// onto a directory fails and leaves the directory alone.
	ReplaceDir bool

	// Tests of this package simulate a crash: crashAt names a step of a
	// directory commit at which Commit returns errCrashed at once, leaving
	// everything as a killed process would; noExchange forces the
	// two-rename fallback.
	crashAt    string
	noExchange bool
}

// errCrashed is what Commit returns at Config.crashAt.
var errCrashed = errors.New("atomicfile: crashed (simulated)")

func (c Config) crash(step string) bool { return c.crashAt == step }

// WriteFile replaces path with data, with mode perm, atomically: see the
// package documentation for the protocol. On error the previous file at
// path, if any, is unchanged and no temporary file is left.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Config{}.WriteFile(path, data, perm)
}

// WriteFile is the package-level WriteFile with c's settings.
func (c Config) WriteFile(path string, data []byte, perm os.FileMode) error {
	s, err := c.Stage(path, data, perm)
	if err != nil {
		return err
	}
	return s.Commit()
}

// Stage writes data to a synced temporary file beside path, with mode perm,
// and returns it for Commit or Discard; path itself is not touched yet. On
// error nothing is left behind.
func (c Config) Stage(path string, data []byte, perm os.FileMode) (*Staged, error) {
	return c.StageFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// StageFunc is Stage for data produced by a writer: fill writes the new
// contents to w. If fill returns an error, the temporary file is removed
// and the error is returned wrapped.
func (c Config) StageFunc(path string, perm os.FileMode, fill func(w io.Writer) error) (*Staged, error) {
	create := c.CreateTemp
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
	return &Staged{path: path, tmp: name, o: c}, nil
}

// Staged is a synced temporary file waiting to replace its target. It is
// not safe for concurrent use.
type Staged struct {
	path, tmp string
	done      bool
	dir       bool // staged by StageDir
	o         Config
}

// Commit puts the staged file or directory at the target and syncs the
// target's directory. A file is renamed over the target file (a directory
// at the target is an error unless Config.ReplaceDir); a directory, or a
// file replacing a directory, is exchanged with what is at the target (see
// the package documentation).
// If that fails, the temporary file or directory is removed and the target
// is unchanged. Commit after Commit or Discard returns ErrFinished.
func (s *Staged) Commit() error {
	if s.done {
		return fmt.Errorf("atomicfile: commit %s: %w", s.path, ErrFinished)
	}
	s.done = true
	if fi, err := os.Lstat(s.path); s.dir || (s.o.ReplaceDir && err == nil && fi.IsDir()) {
		// A rename does not replace a directory: exchange the two.
		return s.commitDir()
	}
	if err := os.Rename(s.tmp, s.path); err != nil {
		os.Remove(s.tmp)
		return failed("rename temporary file to", s.path, err)
	}
	return syncDirErr(filepath.Dir(s.path), s.path)
}

// Discard removes the temporary file or directory, leaving the target
// unchanged. It does nothing after Commit or Discard, so `defer
// s.Discard()` is safe.
func (s *Staged) Discard() {
	if s.done {
		return
	}
	s.done = true
	os.RemoveAll(s.tmp)
}

func osCreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

func failed(op, path string, err error) error {
	return fmt.Errorf("atomicfile: %s %s: %w; the previous file is unchanged", op, path, err)
}

// syncDir makes the renames in dir durable. Where the platform or file
// system cannot sync a directory (Windows; EINVAL or ENOTSUP from fsync)
// it does nothing; any other failure is an error.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported) {
		err = nil
	}
	return errors.Join(err, d.Close())
}
