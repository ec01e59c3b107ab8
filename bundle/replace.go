package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkReplace decides whether a bundle may be written at path: nothing is
// there, or a bundle is there and force is set.
func checkReplace(path string, force bool) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := isBundle(path, fi); err != nil {
		return fmt.Errorf("%w: it exists and is not a bundle (%v); a bundle write replaces nothing else: choose another path", ErrExists, err)
	}
	if !force {
		return fmt.Errorf("%w: it is a bundle; to replace it set Config.Force (the -force flag of cmd/bundle merge)", ErrExists)
	}
	return nil
}

// isBundle reports (as nil) whether the entry at path looks like a bundle
// this package wrote: a directory holding a valid manifest and only the
// names a bundle may hold, or a zstd file whose first tar entry is a valid
// manifest. It does not verify digests: a damaged bundle is still one.
func isBundle(path string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return isBundleDir(path)
	case fi.Mode().IsRegular():
		return isBundleFile(path)
	}
	return fmt.Errorf("a %s", describeMode(fi.Mode()))
}

func isBundleDir(path string) error {
	b, err := readDirFile(path, manifestFile, maxJSON)
	if err != nil {
		return fmt.Errorf("%s: %w", manifestFile, err)
	}
	if _, err := parseManifest(b); err != nil {
		return fmt.Errorf("%s: %w", manifestFile, err)
	}
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == path {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel == blobDir {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is a %s", rel, describeMode(d.Type()))
		}
		return checkName(rel)
	})
}

func isBundleFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if m, err := br.Peek(len(zstdMagic)); err != nil || !bytes.Equal(m, zstdMagic) {
		return errors.New("not zstd-compressed")
	}
	zr, err := newZstdReader(br)
	if err != nil {
		return err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil {
		return err
	}
	if h.Name != manifestFile || h.Size > maxJSON {
		return fmt.Errorf("its first entry is %q, not %s", h.Name, manifestFile)
	}
	b, err := readExact(tr, h.Size)
	if err != nil {
		return err
	}
	_, err = parseManifest(b)
	return err
}
