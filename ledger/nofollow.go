package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"github.com/gofrs/flock"
)

// errLink: a file the embedded store writes is a symbolic link or not a
// regular file.
var errLink = errors.New("not a regular file")

// The embedded store never writes through a symbolic link: the ledger
// file (for appending, retention and repair), its lock file and its
// repair log are opened with O_NOFOLLOW where the system has it (Unix),
// after an Lstat that refuses a link or anything but a regular file, and
// checked after opening to be the file the path names (os.SameFile of the
// open file and an Lstat of the path), which is what stands where
// O_NOFOLLOW is missing (Windows). A link planted beside a ledger so
// refuses the ledger instead of creating or appending to its target.

// refuseLink refuses path when it exists and is not a regular file
// itself.
func refuseLink(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return checkRegular(path, fi)
}

func checkRegular(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	what := "not a regular file (" + fi.Mode().Type().String() + ")"
	if fi.Mode()&fs.ModeSymlink != 0 {
		what = "a symbolic link"
	}
	return fmt.Errorf("ledger: %w: %s is %s; the ledger, its lock and its repair log are never opened through one: remove it", errLink, path, what)
}

// sameAsPath checks that f, opened from path, is the regular file path
// names now.
func sameAsPath(f interface{ Stat() (fs.FileInfo, error) }, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("ledger: stat %s: %w", path, err)
	}
	li, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := checkRegular(path, li); err != nil {
		return err
	}
	if !os.SameFile(fi, li) {
		return fmt.Errorf("ledger: %w: %s was replaced while it was opened; try again", errLink, path)
	}
	return nil
}

// openNoFollow opens path with flag (and O_NOFOLLOW where there is one),
// refusing a symbolic link and anything but a regular file.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := refuseLink(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag|oNoFollow, perm)
	if err != nil {
		if lerr := refuseLink(path); lerr != nil {
			return nil, lerr
		}
		return nil, err
	}
	if err := sameAsPath(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// newLock returns the flock of path, opened with O_NOFOLLOW where there
// is one.
func newLock(path string) *flock.Flock {
	flag := os.O_CREATE | os.O_RDONLY
	switch runtime.GOOS {
	case "aix", "solaris", "illumos":
		flag = os.O_CREATE | os.O_RDWR // as flock.New: these lock only files open for writing
	}
	return flock.New(path, flock.SetPermissions(0o644), flock.SetFlag(flag|oNoFollow))
}

// checkLock checks, once lk is held, that it is held on the regular file
// its path names, and releases it otherwise.
func checkLock(lk *flock.Flock) error {
	if err := sameAsPath(lk, lk.Path()); err != nil {
		lk.Unlock()
		return err
	}
	return nil
}
