package childproc

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// A fresh home holds copies of the SDK configuration entries of the test
// process's home, never links to them, within bounds (see Fresh home in
// the package documentation for why).

// Bounds of the copies of a fresh home, all entries together.
const (
	maxHomeFiles = 1024
	maxHomeBytes = 32 << 20
)

// homeEntry is one SDK configuration entry: rel under the fresh home is a
// copy of src, an entry of the test process's home, without the names in
// skip at its top.
type homeEntry struct {
	rel, src string
	skip     []string
}

// sdkConfigEntries lists the SDK configuration entries present under the
// test process's home, which a fresh home copies.
func sdkConfigEntries() []homeEntry {
	home, _ := os.UserHomeDir() //detvet:ignore the test process's home, whose SDK configuration entries a child's fresh home copies
	//detvet:ignore where the SDKs' configuration lives, copied into a child's fresh home
	return configEntries(runtime.GOOS, home, os.LookupEnv)
}

// configEntries lists the SDK configuration entries present under home on
// the system goos, with the environment lookup: the AWS shared config,
// credentials and SSO cache (.aws), the Anthropic config directory, and
// the gcloud directory with Gemini's application default credentials.
func configEntries(goos, home string, lookup func(string) (string, bool)) []homeEntry {
	var out []homeEntry
	add := func(rel, src string, skip ...string) {
		if src == "" || !filepath.IsAbs(src) {
			return
		}
		if _, err := os.Lstat(src); err == nil {
			out = append(out, homeEntry{rel, src, skip})
		}
	}
	gcloudSkip := []string{"logs", "virtenv"}
	if home != "" {
		add(".aws", filepath.Join(home, ".aws"))
	}
	if goos == "windows" {
		if d, _ := lookup("APPDATA"); d != "" {
			add(filepath.Join("AppData", "Roaming", "Anthropic"), filepath.Join(d, "Anthropic"))
			add(filepath.Join("AppData", "Roaming", "gcloud"), filepath.Join(d, "gcloud"), gcloudSkip...)
		}
		return out
	}
	if home != "" {
		add(filepath.Join(".config", "gcloud"), filepath.Join(home, ".config", "gcloud"), gcloudSkip...)
	}
	if _, set := lookup("ANTHROPIC_CONFIG_DIR"); !set {
		cfg, _ := lookup("XDG_CONFIG_HOME")
		if cfg == "" && home != "" {
			cfg = filepath.Join(home, ".config")
		}
		if cfg != "" {
			add(filepath.Join(".config", "anthropic"), filepath.Join(cfg, "anthropic"))
		}
	}
	return out
}

// homeCopy copies SDK configuration entries within the bounds, counting
// what it copied; with dst "" it only checks what a copy would meet.
type homeCopy struct {
	files int
	bytes int64
}

// copyEntries copies each entry to its place under home, after checking
// that the whole copy can be made; with home "" it only checks.
func copyEntries(home string, entries []homeEntry) error {
	if home != "" {
		if err := copyEntries("", entries); err != nil {
			return err
		}
	}
	var hc homeCopy
	for _, e := range entries {
		dst := ""
		if home != "" {
			dst = filepath.Join(home, e.rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				return err
			}
		}
		if err := hc.entry(e, dst); err != nil {
			return err
		}
	}
	return nil
}

// entry copies the tree of e, read from where its source leads, to dst.
func (hc *homeCopy) entry(e homeEntry, dst string) error {
	root, err := filepath.EvalSymlinks(e.src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	return hc.copy(root, root, dst, fi, e.skip)
}

// copy copies src, of the entry whose tree is at root, to dst, leaving
// out the names in skip when src is the root.
func (hc *homeCopy) copy(root, src, dst string, fi fs.FileInfo, skip []string) error {
	if hc.files++; hc.files > maxHomeFiles {
		return fmt.Errorf("it holds more than %d files and directories, the most a fresh home copies", maxHomeFiles)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		to, err := filepath.EvalSymlinks(src)
		if err != nil {
			return fmt.Errorf("%s is a symbolic link that leads nowhere: %w", src, err)
		}
		if !inside(root, to) {
			return fmt.Errorf("%s is a symbolic link leaving %s", src, root)
		}
		tfi, err := os.Stat(to)
		if err != nil {
			return err
		}
		if !tfi.Mode().IsRegular() {
			return fmt.Errorf("%s is a symbolic link to a directory", src)
		}
		return hc.file(to, dst, tfi)
	case fi.IsDir():
		if dst != "" {
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
		}
		des, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, de := range des {
			if src == root && slices.Contains(skip, de.Name()) {
				continue
			}
			cfi, err := de.Info()
			if err != nil {
				return err
			}
			cdst := ""
			if dst != "" {
				cdst = filepath.Join(dst, de.Name())
			}
			if err := hc.copy(root, filepath.Join(src, de.Name()), cdst, cfi, nil); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode().IsRegular():
		return hc.file(src, dst, fi)
	}
	return fmt.Errorf("%s is neither a regular file nor a directory", src)
}

// file copies the regular file src to dst, readable and writable by its
// owner alone.
func (hc *homeCopy) file(src, dst string, fi fs.FileInfo) error {
	left := maxHomeBytes - hc.bytes
	tooBig := fmt.Errorf("it holds more than %d bytes, the most a fresh home copies", maxHomeBytes)
	if fi.Size() > left {
		return tooBig
	}
	if dst == "" {
		hc.bytes += fi.Size()
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if ifi, err := in.Stat(); err != nil || !ifi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, left+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > left {
		err = tooBig
	}
	hc.bytes += n
	return err
}

// inside reports whether path lies in the tree at root (both resolved).
func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
