package cassettes

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/codegenie/codegenie/internal/manifest"
)

// readAllInto reads r to its end, appending to b.
func readAllInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 4096)
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// readBounded reads path, refusing a file larger than limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b []byte
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() <= limit {
		b = make([]byte, 0, fi.Size()+1)
	}
	b, err = readAllInto(io.LimitReader(f, limit+1), b)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes, the most this package reads", limit)
	}
	return b, nil
}

// readManifest reads the manifest at path (shared: the result must not
// be modified); its errors are *CassetteError.
func readManifest(path string) (*manifest.Manifest, error) {
	m, err := manifest.Shared(path)
	var me *manifest.Error
	if errors.As(err, &me) {
		return nil, newErr(me.Path, me.Line, "manifest", me.Err)
	}
	return m, err
}

// verifyManifest checks the opened cassette against its manifest entry.
// It reports whether a manifest vouched for the cassette.
func (c *Cassette) verifyManifest(p *parsed) (bool, error) {
	mpath := c.cfg.Manifest
	if err := interrupted(filepath.Dir(c.path)); err != nil {
		return false, err
	}
	if mpath == "" {
		mpath = filepath.Join(filepath.Dir(c.path), manifest.Name)
		if _, err := os.Stat(mpath); errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
	}
	m, err := readManifest(mpath)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(filepath.Dir(mpath), c.path)
	if err != nil {
		return false, newErr(c.path, 0, "verify", err)
	}
	err = verifyEntry(m, filepath.ToSlash(rel), c.path, p, c.hint)
	return err == nil, err
}

func verifyEntry(m *manifest.Manifest, rel, path string, p *parsed, refresh string) error {
	e, ok := m.Lookup(rel)
	if !ok {
		return newErr(path, 0, "verify", detailf(errNotInManifest,
			"%v: %q has no manifest entry; a cassette enters the manifest when it is recorded: %s", errNotInManifest, rel, refresh))
	}
	if got := p.digest.String(); got != e.Digest {
		return newErr(path, 0, "verify", detailf(errDigestMismatch,
			"%v: the cassette was changed other than by recording it: its digest is %s, the manifest records %s; restore it from version control, or re-record with: %s",
			errDigestMismatch, got, e.Digest, refresh))
	}
	if n := len(p.c.Interactions); n != e.Interactions {
		return newErr(path, 0, "verify", detailf(errDigestMismatch,
			"%v: %d interactions, the manifest records %d", errDigestMismatch, n, e.Interactions))
	}
	return nil
}

// Verify checks the cassettes in dir against dir's manifest: the manifest
// parses and its history chain is intact, every entry's file exists, parses
// and has the recorded digest and interaction count, every cassette
// file (*.yaml) in dir is listed, and none is past its hard maximum age
// (an error wrapping [ErrExpired]); one past its maximum age is reported
// to cfg.Warn. It returns all problems joined, each a [*CassetteError],
// or nil. The zero [VerifyConfig] judges ages at time.Now.
func Verify(dir string, cfg VerifyConfig) error { return verify(dir, cfg) }

func verify(dir string, cfg VerifyConfig) error {
	if err := interrupted(dir); err != nil {
		return err
	}
	mpath := filepath.Join(dir, manifest.Name)
	m, err := readManifest(mpath)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range m.Cassettes {
		path := filepath.Join(dir, filepath.FromSlash(e.File))
		refresh := rerecordHint(path, Config{})
		p, err := readCassette(path, refresh)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := verifyEntry(m, e.File, path, p, refresh); err != nil {
			errs = append(errs, err)
		}
		if err := secretError(p, "verify", "", refresh, true); err != nil {
			errs = append(errs, err)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return newErr(dir, 0, "verify", err)
	}
	for _, f := range files {
		if _, ok := m.Lookup(filepath.Base(f)); !ok {
			errs = append(errs, newErr(f, 0, "verify", detailf(errNotInManifest,
				"%v: no entry in %s; a cassette enters the manifest when it is recorded, so re-record it, or delete the stray file", errNotInManifest, mpath)))
		}
	}
	errs = append(errs, freshness(dir, m, cfg)...)
	return errors.Join(errs...)
}
