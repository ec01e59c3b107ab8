package bundle

import (
	"archive/tar"
	"cmp"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/codegenie/codegenie/internal/atomicfile"
)

// streamOrder is the order of entries in the single-file form: manifest,
// metadata, runs, snapshot, blobs sorted by name, events.log.
func (p *plan) streamOrder() []planFile {
	rank := func(n string) int {
		switch {
		case n == metadataFile:
			return 0
		case n == runsFile:
			return 1
		case n == snapshotFile:
			return 2
		case strings.HasPrefix(n, blobDir+"/"):
			return 3
		}
		return 4
	}
	fs := slices.Clone(p.files)
	slices.SortStableFunc(fs, func(a, b planFile) int { return cmp.Compare(rank(a.name), rank(b.name)) })
	return fs
}

func writeErr(path string, err error) error {
	var be *BundleError
	if errors.As(err, &be) {
		return err
	}
	return &BundleError{Path: path, Record: -1, Op: "write", Err: err}
}

// Write writes b as a directory bundle at dir. It builds the bundle in a
// temporary directory beside dir and puts it in place in one step
// (internal/atomicfile), so dir always holds the old bundle or the new
// one, never a half-written one; leftovers of an interrupted write are
// removed by the next. It refuses an existing dir unless it is a bundle
// and o.Force is set, and refuses events that would not verify.
func (c Config) Write(ctx context.Context, dir string, b *Bundle) error {
	p, err := makePlan(b)
	if err != nil {
		return writeErr(dir, err)
	}
	return p.writeDir(ctx, dir, c.Force)
}

func (p *plan) writeDir(ctx context.Context, dir string, force bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkReplace(dir, force); err != nil {
		return writeErr(dir, err)
	}
	err := atomicfile.WriteDir(dir, 0o755, func(tmp string) error {
		if slices.ContainsFunc(p.files, func(f planFile) bool { return strings.HasPrefix(f.name, blobDir+"/") }) {
			if err := os.Mkdir(filepath.Join(tmp, blobDir), 0o755); err != nil {
				return err
			}
		}
		all := append(slices.Clone(p.files), planFile{name: manifestFile, data: p.manifest})
		for _, f := range all {
			if err := writeNew(filepath.Join(tmp, filepath.FromSlash(f.name)), func(w io.Writer) error {
				if f.data != nil {
					_, err := w.Write(f.data)
					return err
				}
				_, err := writeLog(w, p.runs)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return writeErr(dir, err)
	}
	return nil
}

// writeNew creates path, which must not exist, and fills it through a
// buffer. atomicfile syncs the whole tree afterwards.
func writeNew(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	bw := newBufWriter(f)
	err = fill(bw)
	err = errors.Join(err, bw.Flush())
	return errors.Join(err, f.Close())
}

// zstdOptions are fixed so that the same bundle always gives the same
// bytes: one encoder goroutine, a fixed level and window, checksums on.
func newZstdWriter(w io.Writer) (*zstd.Encoder, error) {
	return zstd.NewWriter(w,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedBetterCompression),
		zstd.WithWindowSize(maxWindow),
		zstd.WithEncoderCRC(true),
	)
}

// Encoders are pooled: building one allocates several MiB. A reset
// encoder produces the same bytes as a new one.
var encoders sync.Pool

func getZstdWriter(w io.Writer) (*zstd.Encoder, error) {
	if zw, ok := encoders.Get().(*zstd.Encoder); ok {
		zw.Reset(w)
		return zw, nil
	}
	return newZstdWriter(w)
}

func putZstdWriter(zw *zstd.Encoder) {
	zw.Reset(nil)
	encoders.Put(zw)
}

// writeStream writes the single-file form of p to w.
func (p *plan) writeStream(w io.Writer) error {
	zw, err := getZstdWriter(w)
	if err != nil {
		return err
	}
	defer putZstdWriter(zw)
	if err := p.writeTar(zw); err != nil {
		return err
	}
	return zw.Close()
}

// writeTar writes the tar stream of the single-file form of p to w.
func (p *plan) writeTar(w io.Writer) error {
	tw := tar.NewWriter(w)
	entry := func(name string, size int64, fill func(io.Writer) error) error {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     name,
			Size:     size,
			Mode:     0o644,
			ModTime:  time.Unix(0, 0),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		return fill(tw)
	}
	data := func(b []byte) func(io.Writer) error {
		return func(w io.Writer) error { _, err := w.Write(b); return err }
	}
	if err := entry(manifestFile, int64(len(p.manifest)), data(p.manifest)); err != nil {
		return err
	}
	for _, f := range p.streamOrder() {
		fill := data(f.data)
		if f.data == nil {
			fill = func(w io.Writer) error { _, err := writeLog(w, p.runs); return err }
		}
		if err := entry(f.name, f.size, fill); err != nil {
			return err
		}
	}
	return tw.Close()
}

// WriteFile writes b as a single-file bundle at path: the directory form as
// a tar stream (fixed order and headers) compressed with zstd, so the same
// bundle always gives the same bytes and
//
//	zstd -dc FILE | tar -x -C DIR
//
// gives the directory form. The file is written to a temporary file in the
// same directory, synced and renamed into place (internal/atomicfile);
// leftovers of an interrupted write are removed by the next. It refuses an
// existing path unless it is a bundle and o.Force is set.
func (c Config) WriteFile(ctx context.Context, path string, b *Bundle) error {
	p, err := makePlan(b)
	if err != nil {
		return writeErr(path, err)
	}
	return p.writeFile(ctx, path, c.Force)
}

func (p *plan) writeFile(ctx context.Context, path string, force bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkReplace(path, force); err != nil {
		return writeErr(path, err)
	}
	if err := atomicfile.RemoveLeftovers(path); err != nil {
		return writeErr(path, err)
	}
	s, err := atomicfile.Config{ReplaceDir: true}.StageFunc(path, 0o644, func(w io.Writer) error {
		bw := newBufWriter(w)
		return errors.Join(p.writeStream(bw), bw.Flush())
	})
	if err == nil {
		err = s.Commit()
	}
	if err != nil {
		return writeErr(path, err)
	}
	return nil
}

// FileExt is the extension of single-file bundles.
const FileExt = ".bundle.zst"
