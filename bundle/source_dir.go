package bundle

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// The directory form: every file is read from the bundle directory,
// which must hold exactly the files its manifest lists, all regular (no
// links).

func (r *Reader) openDir() error {
	b, err := readDirFile(r.path, manifestFile, maxJSON)
	if err == nil {
		err = r.hdr.setManifest(b)
	}
	if err != nil {
		return r.fail(manifestFile, -1, "open", err)
	}
	r.blobs.dir, r.blobs.manifest = r.path, r.hdr.manifest
	if err := r.walkDir(); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		max  int64
		set  func([]byte) error
	}{{metadataFile, maxJSON, r.hdr.setMetadata}, {runsFile, maxJSON, r.hdr.setRuns}, {snapshotFile, maxSnapshot, r.hdr.setSnapshot}} {
		if _, ok := r.hdr.manifest.file(f.name); !ok {
			continue
		}
		b, err := readDirFile(r.path, f.name, f.max)
		if err == nil {
			err = f.set(b)
		}
		if err != nil {
			return r.fail(f.name, -1, "open", err)
		}
	}
	lf, size, err := openDirFile(r.path, eventsFile, 1<<62)
	if err != nil {
		return r.fail(eventsFile, -1, "open", err)
	}
	r.src.closers = append(r.src.closers, lf)
	return r.startLog(lf, size, nil)
}

// walkDir checks that every present file is allowed and listed, and every
// listed file present; no links anywhere.
func (r *Reader) walkDir() error {
	ents, err := os.ReadDir(r.path)
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	present := map[string]bool{}
	add := func(name string, t fs.FileMode) error {
		if err := checkName(name); err != nil {
			return r.fail(name, -1, "open", err)
		}
		if !t.IsRegular() {
			return r.fail(name, -1, "open", wrapf(errUnsafeName, "not a regular file (%s): links are not allowed", describeMode(t)))
		}
		present[name] = true
		return nil
	}
	for _, e := range ents {
		if e.Name() != blobDir {
			if err := add(e.Name(), e.Type()); err != nil {
				return err
			}
			continue
		}
		if e.Type() != fs.ModeDir {
			return r.fail(blobDir, -1, "open", wrapf(errUnsafeName, "%s must be a plain directory, not a %s", blobDir, describeMode(e.Type())))
		}
		bents, err := os.ReadDir(filepath.Join(r.path, blobDir))
		if err != nil {
			return r.fail(blobDir, -1, "open", err)
		}
		for _, be := range bents {
			if err := add(blobDir+"/"+be.Name(), be.Type()); err != nil {
				return err
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(present)) {
		if _, ok := r.hdr.manifest.file(name); !ok && name != manifestFile {
			return r.fail(name, -1, "open", wrapf(errUnsafeName, "present in the bundle but not listed in the manifest"))
		}
	}
	for _, f := range r.hdr.manifest.Files {
		if !present[f.Path] {
			return r.fail(f.Path, -1, "open", wrapf(errMissing, "listed in the manifest but absent"))
		}
	}
	return nil
}

// readDirFile reads a file of the directory form of at most max bytes.
func readDirFile(root, name string, max int64) ([]byte, error) {
	f, size, err := openDirFile(root, name, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readExact(f, size)
}

// openDirFile opens a file of the directory form and returns its size: a
// regular file (no link) of at most max bytes.
func openDirFile(root, name string, max int64) (*os.File, int64, error) {
	p := filepath.Join(root, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, wrapf(errMissing, "listed in the manifest but absent")
		}
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, wrapf(errUnsafeName, "not a regular file (%s): links are not allowed", describeMode(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, 0, wrapf(errTooLarge, "%d bytes, at most %d", fi.Size(), max)
	}
	f, err := os.Open(p)
	return f, fi.Size(), err
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "irregular file"
}
