package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The tags of the names a write gives its temporary entries beside the
// target NAME: ".NAME.tmp-<digits>" for what is being written (and, after
// an exchange, for the previous tree being removed), ".NAME.old-<digits>"
// for a previous tree moved aside where names cannot be exchanged.
const (
	tmpTag = "tmp"
	oldTag = "old"
)

func leftoverPrefix(path, tag string) string {
	return "." + filepath.Base(path) + "." + tag + "-"
}

// isLeftover reports whether name is a temporary entry this package makes
// for path with the given tag: the prefix followed by digits only
// (os.CreateTemp and os.MkdirTemp replace the pattern's end with digits).
func isLeftover(name, path, tag string) bool {
	rest, ok := strings.CutPrefix(name, leftoverPrefix(path, tag))
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}

// RemoveLeftovers cleans up after writes of path that were interrupted (a
// crash, a kill): it removes the temporary files and directories they
// left beside path, and, when path itself is missing because a crash came
// between the two renames of the fallback directory swap, renames the
// previous tree back to path first. It touches only names this package
// makes for path (".NAME.tmp-<digits>", ".NAME.old-<digits>"). StageDir
// calls it; a caller of WriteFile or Stage that wants the same calls it
// before writing. Two writers of one path must not run at once: one would
// remove the other's temporary file.
func RemoveLeftovers(path string) error {
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("atomicfile: look for leftovers of %s: %w", path, err)
	}
	var tmps, olds []string
	for _, e := range ents {
		switch n := e.Name(); {
		case isLeftover(n, path, tmpTag):
			tmps = append(tmps, filepath.Join(dir, n))
		case isLeftover(n, path, oldTag):
			olds = append(olds, filepath.Join(dir, n))
		}
	}
	slices.Sort(olds)
	var errs []error
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) && len(olds) > 0 {
		// Only one write of path runs at a time and each starts here, so
		// there is at most one previous tree to restore.
		if err := os.Rename(olds[0], path); err != nil {
			errs = append(errs, fmt.Errorf("atomicfile: restore %s from %s: %w", path, olds[0], err))
		}
		olds = olds[1:]
	}
	for _, p := range append(tmps, olds...) {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("atomicfile: remove leftover %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}
