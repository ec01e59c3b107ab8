package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/codegenie/codegenie/events"
)

// The two on-disk forms of a bundle, as Reader.Form and VerifyReport.Form
// name them.
const (
	formDir  = "directory"
	formFile = "file"
)

// Reader streams a bundle's runs and their events, validating as it goes.
// Open checks everything before the event log (manifest, metadata, runs,
// snapshot); Next checks each record; the io.EOF from Next means every
// check passed, including the end-of-log checks (each run's trailer, the
// file's digest and size, the blobs). Memory does not grow with the number
// of events. Next validates ahead on a goroutine of the Reader's own,
// which Close ends; a Reader is for one goroutine at a time.
type Reader struct {
	path  string
	form  string
	hdr   header
	src   source
	blobs *blobStore
	v     validator
	// keep: Next hands out payloads, so blob bytes are kept; Verify only
	// hashes them. maxPayload bounds delivered, the payload bytes handed
	// out so far.
	keep       bool
	maxPayload int64
	delivered  int64
	// done and cause are the Open context's Done channel and cause: a
	// read checks done before each record.
	done  <-chan struct{}
	cause func() error
	// pre validates ahead of Next (prefetch.go); consumed counts the
	// records Next returned; closed is set by Close.
	pre      *prefetcher
	consumed int
	closed   bool
}

// source holds what the reader must release, and the single-file form's
// zstd frame.
type source struct {
	closers []io.Closer
	frame   *frameReader
}

// Open opens the bundle at path (a directory or a single file) and checks
// everything before the event log. The caller must Close the Reader.
// Cancelling ctx makes the next record read fail with ctx's cause.
func (c Config) Open(ctx context.Context, path string) (*Reader, error) {
	return open(ctx, path, true, c, c.newBudget())
}

func newReader(path string, keep bool, o Config, mem *budget) *Reader {
	return &Reader{path: path, keep: keep, blobs: newBlobStore(mem), maxPayload: o.maxPayload()}
}

func open(ctx context.Context, path string, keep bool, o Config, mem *budget) (*Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := newReader(path, keep, o, mem)
	r.watch(ctx)
	if err := r.open(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// watch makes the reader fail once ctx is done.
func (r *Reader) watch(ctx context.Context) {
	r.done = ctx.Done()
	r.cause = func() error { return context.Cause(ctx) }
}

// cancelled returns the context's cause once it is done, else nil.
func (r *Reader) cancelled() error {
	select {
	case <-r.done:
		return r.cause()
	default:
		return nil
	}
}

func (r *Reader) fail(file string, record int, op string, err error) error {
	var be *BundleError
	if errors.As(err, &be) {
		return err
	}
	return &BundleError{Path: r.path, File: file, Record: record, Op: op, Err: err}
}

func (r *Reader) open() error {
	fi, err := os.Lstat(r.path)
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	switch {
	case fi.IsDir():
		r.form = formDir
		return r.openDir()
	case fi.Mode().IsRegular():
		r.form = formFile
		return r.openFile()
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(r.path)
		return r.fail("", -1, "open", wrapf(errUnsafeName, "a symbolic link (to %q): bundle paths are not followed; pass the link's target", target))
	default:
		return r.fail("", -1, "open", wrapf(errUnsafeName, "a %s, not a directory or a regular file", describeMode(fi.Mode())))
	}
}

// startLog starts reading events.log (size bytes, from the manifest) from
// rd; end runs after its last byte.
func (r *Reader) startLog(rd io.Reader, size int64, end func() error) error {
	r.v.log = newLogReader(rd, size)
	r.v.end = end
	if err := r.v.log.header(); err != nil {
		return r.fail(eventsFile, -1, "open", err)
	}
	return nil
}

// Metadata returns the bundle's metadata.
func (r *Reader) Metadata() Metadata { return r.hdr.meta }

// Runs returns the bundle's runs (runs.json), sorted by ID: the order in
// which Next returns their events.
func (r *Reader) Runs() []RunInfo { return r.hdr.runs }

// Snapshot returns the bundle's snapshot, or nil.
func (r *Reader) Snapshot() *Snapshot { return r.hdr.snap }

// Form returns the bundle's form: "directory" or "file".
func (r *Reader) Form() string { return r.form }

// Digest returns the bundle digest: the blake3 of manifest.json, which
// covers every file.
func (r *Reader) Digest() events.Digest { return events.Sum(r.hdr.manifestB) }

// Output returns the output bytes of run i (an index into Runs), checked
// against their digest. They are shared: treat them as read-only.
func (r *Reader) Output(i int) ([]byte, error) {
	if i < 0 || i >= len(r.hdr.runs) {
		return nil, r.fail(runsFile, -1, "read", wrapf(errMissing, "no run %d (the bundle holds %d)", i, len(r.hdr.runs)))
	}
	info := r.hdr.runs[i]
	if info.OutputSize == 0 {
		return []byte{}, nil
	}
	b, err := r.blobs.get(info.Output)
	if err != nil {
		return nil, r.fail(blobName(info.Output), -1, "read", fmt.Errorf("output of run %q: %w", info.ID, err))
	}
	return b, nil
}

// Close stops validating ahead, waits for that to end and releases the
// bundle's files.
func (r *Reader) Close() error {
	r.closed = true
	r.stopPrefetch()
	var errs []error
	for i := len(r.src.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.src.closers[i].Close())
	}
	r.src.closers = nil
	return errors.Join(errs...)
}
