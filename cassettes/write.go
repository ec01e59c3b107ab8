package cassettes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// tempFile is what atomic writes need from a temporary file.
type tempFile interface {
	Write([]byte) (int, error)
	Sync() error
	Close() error
	Name() string
}

func osCreateTemp(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) }

// stageFile writes data to a new temporary file in path's directory and
// syncs it. It returns the temporary name; the caller renames it over path
// (commit) or removes it. On error nothing is left behind.
func stageFile(path string, data []byte, create func(dir, pattern string) (tempFile, error)) (string, error) {
	if create == nil {
		create = osCreateTemp
	}
	f, err := create(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", newErr(path, 0, "write", err)
	}
	name := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(name)
		return "", newErr(path, 0, "write", fmt.Errorf("%w; the previous file is unchanged", err))
	}
	return name, nil
}

// writeFileAtomic replaces path with data: temp file in the same directory,
// fsync, rename, fsync of the directory. A failure at any point leaves the
// previous file untouched.
func writeFileAtomic(path string, data []byte, create func(dir, pattern string) (tempFile, error)) error {
	tmp, err := stageFile(path, data, create)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return newErr(path, 0, "write", err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir makes a rename durable where the platform allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
