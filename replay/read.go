package replay

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"
	"lukechampine.com/blake3"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// Form is the on-disk form of a bundle.
type Form string

// The two forms.
const (
	FormDir  Form = "directory"
	FormFile Form = "file"
)

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Reader streams a bundle's events, validating as it goes. Open checks the
// manifest, metadata and snapshot; Next checks each record; the io.EOF from
// Next means every check passed, including the end-of-log checks (trailer,
// chain head, file digest and size, unreferenced blobs). Memory does not grow
// with the number of events. Next validates ahead on a goroutine of the
// Reader's own, which Close ends; a Reader is for one goroutine at a time.
type Reader struct {
	ctx  context.Context
	path string
	form Form

	manifest  *Manifest
	manifestB []byte
	meta      Metadata
	snap      *Snapshot
	snapState *State
	closers   []io.Closer
	// blobs holds the blobs read for delivery (the single-file form: all,
	// read before the log; the directory form: each at its first
	// reference), shared by the events that refer to them; mem accounts
	// for them against Options.MaxBufferedBlobs.
	blobs map[events.Digest][]byte
	mem   *budget
	// maxPayload bounds delivered, the payload bytes Next has handed out.
	maxPayload int64
	delivered  int64
	// frame is the single-file form's zstd frame.
	frame *frameReader

	log   *logReader
	chain events.Chainer
	order orderCheck
	index int
	r     rec
	// stored is the current stored record, header its header record (the
	// chained bytes), payload the blob bytes of a blob reference when kept.
	stored  []byte
	header  []byte
	payload []byte
	// keep: blob bytes are needed (Next returns payloads); Verify only
	// hashes them.
	keep bool
	done bool
	err  error
	// verified holds the directory form's blobs already checked (names
	// only: the directory form keeps no blob bytes).
	verified map[events.Digest]bool

	// pre validates ahead of Next on its own goroutine (prefetch.go);
	// consumed counts the records Next returned; closed is set by Close.
	pre      *prefetcher
	consumed int
	closed   bool
}

// Open opens the bundle at path with the default Options (see
// Options.Open).
func Open(ctx context.Context, path string) (*Reader, error) {
	return Options{}.Open(ctx, path)
}

// Open opens the bundle at path (a directory or a single file) and checks
// everything before the event log. A FAILED bundle gives an error wrapping
// ErrReplayUnavailable. The caller must Close the Reader.
func (o Options) Open(ctx context.Context, path string) (*Reader, error) {
	return open(ctx, path, true, o, o.newBudget())
}

func newReader(ctx context.Context, path string, keep bool, o Options, mem *budget) *Reader {
	return &Reader{ctx: ctx, path: path, keep: keep, blobs: map[events.Digest][]byte{}, verified: map[events.Digest]bool{},
		mem: mem, maxPayload: o.maxPayload()}
}

func open(ctx context.Context, path string, keep bool, o Options, mem *budget) (*Reader, error) {
	r := newReader(ctx, path, keep, o, mem)
	if err := r.open(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
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
		r.form = FormDir
		return r.openDir()
	case fi.Mode().IsRegular():
		r.form = FormFile
		return r.openFile()
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(r.path)
		return r.fail("", -1, "open", wrapf(ErrUnsafeName, "a symbolic link (to %q): bundle paths are not followed; pass the link's target", target))
	default:
		return r.fail("", -1, "open", wrapf(ErrUnsafeName, "a %s, not a directory or a regular file", describeMode(fi.Mode())))
	}
}

// readBounded reads all of rd, failing past max bytes.
func readBounded(rd io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(rd, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, wrapf(ErrTooLarge, "larger than %d bytes", max)
	}
	return b, nil
}

func (r *Reader) readDirFile(name string, max int64) ([]byte, error) {
	f, size, err := r.openDirFile(name, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readExact(f, size)
}

// readExact reads exactly size bytes from rd into one allocation of that
// size, failing when rd holds fewer or more.
func readExact(rd io.Reader, size int64) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(rd, b); err != nil {
		return nil, truncErr(err)
	}
	var one [1]byte
	if n, _ := rd.Read(one[:]); n > 0 {
		return nil, wrapf(ErrDigest, "longer than the %d bytes it had when opened: it changed while being read", size)
	}
	return b, nil
}

// openDirFile opens a file of the directory form and returns its size: a
// regular file (no link) of at most max bytes.
func (r *Reader) openDirFile(name string, max int64) (*os.File, int64, error) {
	p := filepath.Join(r.path, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, wrapf(ErrMissing, "listed in the manifest but absent")
		}
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, wrapf(ErrUnsafeName, "not a regular file (%s): links are not allowed", describeMode(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, 0, wrapf(ErrTooLarge, "%d bytes, at most %d", fi.Size(), max)
	}
	f, err := os.Open(p)
	return f, fi.Size(), err
}

// checkEntry checks b against the manifest's entry for name.
func (r *Reader) checkEntry(name string, b []byte) error {
	e, ok := r.manifest.file(name)
	if !ok {
		return wrapf(ErrUnsafeName, "present in the bundle but not listed in the manifest")
	}
	if int64(len(b)) != e.Size {
		return wrapf(ErrDigest, "size %d, the manifest says %d", len(b), e.Size)
	}
	if d := events.Sum(b); d != e.Digest {
		return wrapf(ErrDigest, "digest %s, the manifest says %s", d, e.Digest)
	}
	return nil
}

func (r *Reader) setManifest(b []byte) error {
	m, err := parseManifest(b)
	if err != nil {
		return r.fail(ManifestFile, -1, "open", err)
	}
	r.manifest, r.manifestB = m, b
	return nil
}

func (r *Reader) setMetadata(b []byte) error {
	if err := r.checkEntry(MetadataFile, b); err != nil {
		return r.fail(MetadataFile, -1, "open", err)
	}
	if err := strictUnmarshal(b, &r.meta); err != nil {
		return r.fail(MetadataFile, -1, "open", err)
	}
	if err := checkCanonical(b, r.meta); err != nil {
		return r.fail(MetadataFile, -1, "open", err)
	}
	if err := r.meta.check(); err != nil {
		return r.fail(MetadataFile, -1, "open", err)
	}
	if r.meta.Status == StatusFailed {
		msg := "the run failed before it was captured"
		if r.meta.Error != "" {
			msg = "the run failed: " + r.meta.Error
		}
		return r.fail(MetadataFile, -1, "open", fmt.Errorf("%w (%s); rerun the scenario to capture it", ErrReplayUnavailable, msg))
	}
	return nil
}

func (r *Reader) setSnapshot(b []byte) error {
	if err := r.checkEntry(SnapshotFile, b); err != nil {
		return r.fail(SnapshotFile, -1, "open", err)
	}
	var s Snapshot
	if err := strictUnmarshal(b, &s); err != nil {
		return r.fail(SnapshotFile, -1, "open", err)
	}
	if err := checkCanonical(b, s); err != nil {
		return r.fail(SnapshotFile, -1, "open", err)
	}
	if s.Records > r.manifest.Events || s.At == 0 || s.Records == 0 {
		return r.fail(SnapshotFile, -1, "open", wrapf(ErrMalformed, "snapshot at seq %d covering %d records does not fit a log of %d records", s.At, s.Records, r.manifest.Events))
	}
	r.snap = &s
	r.snapState = NewState()
	return nil
}

func (r *Reader) openDir() error {
	b, err := r.readDirFile(ManifestFile, MaxJSON)
	if err != nil {
		return r.fail(ManifestFile, -1, "open", err)
	}
	if err := r.setManifest(b); err != nil {
		return err
	}
	// Every present file must be allowed and listed; no links anywhere.
	if err := r.walkDir(); err != nil {
		return err
	}
	if b, err = r.readDirFile(MetadataFile, MaxJSON); err != nil {
		return r.fail(MetadataFile, -1, "open", err)
	}
	if err := r.setMetadata(b); err != nil {
		return err
	}
	if _, ok := r.manifest.file(SnapshotFile); ok {
		if b, err = r.readDirFile(SnapshotFile, MaxSnapshot); err != nil {
			return r.fail(SnapshotFile, -1, "open", err)
		}
		if err := r.setSnapshot(b); err != nil {
			return err
		}
	}
	f, err := os.Open(filepath.Join(r.path, EventsFile))
	if err != nil {
		return r.fail(EventsFile, -1, "open", err)
	}
	r.closers = append(r.closers, f)
	return r.startLogWithEnd(f, nil)
}

func (r *Reader) walkDir() error {
	ents, err := os.ReadDir(r.path)
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	present := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if name == BlobDir {
			if e.Type() != fs.ModeDir {
				return r.fail(name, -1, "open", wrapf(ErrUnsafeName, "%s must be a plain directory, not a %s", BlobDir, describeMode(e.Type())))
			}
			bents, err := os.ReadDir(filepath.Join(r.path, BlobDir))
			if err != nil {
				return r.fail(name, -1, "open", err)
			}
			for _, be := range bents {
				bn := BlobDir + "/" + be.Name()
				if err := checkName(bn); err != nil {
					return r.fail(bn, -1, "open", err)
				}
				if !be.Type().IsRegular() {
					return r.fail(bn, -1, "open", wrapf(ErrUnsafeName, "not a regular file (%s): links are not allowed", describeMode(be.Type())))
				}
				present[bn] = true
			}
			continue
		}
		if err := checkName(name); err != nil {
			return r.fail(name, -1, "open", err)
		}
		if !e.Type().IsRegular() {
			return r.fail(name, -1, "open", wrapf(ErrUnsafeName, "not a regular file (%s): links are not allowed", describeMode(e.Type())))
		}
		present[name] = true
	}
	for name := range present {
		if name == ManifestFile {
			continue
		}
		if _, ok := r.manifest.file(name); !ok {
			return r.fail(name, -1, "open", wrapf(ErrUnsafeName, "present in the bundle but not listed in the manifest"))
		}
	}
	for _, f := range r.manifest.Files {
		if !present[f.Path] {
			return r.fail(f.Path, -1, "open", wrapf(ErrMissing, "listed in the manifest but absent"))
		}
	}
	return nil
}

// tarStream reads the entries of a single-file bundle in their fixed order.
type tarStream struct {
	tr  *tar.Reader
	hdr *tar.Header
	bad string // name of the entry next rejected
}

func (t *tarStream) next() error {
	h, err := t.tr.Next()
	if err != nil {
		t.hdr = nil
		return err
	}
	t.bad = h.Name
	if h.Typeflag != tar.TypeReg {
		return wrapf(ErrUnsafeName, "entry %q is not a regular file (type %q): links and directories are not allowed", h.Name, h.Typeflag)
	}
	if err := checkName(h.Name); err != nil {
		return err
	}
	t.hdr, t.bad = h, ""
	return nil
}

func newZstdReader(rd io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(rd, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow))
}

// Decoders are pooled: building one costs more than reading a small
// bundle. A reset decoder decodes like a new one.
var decoders sync.Pool

func getZstdReader(rd io.Reader) (*zstd.Decoder, error) {
	if zr, ok := decoders.Get().(*zstd.Decoder); ok {
		if err := zr.Reset(rd); err == nil {
			return zr, nil
		}
		zr.Close()
	}
	return newZstdReader(rd)
}

func putZstdReader(zr *zstd.Decoder) {
	if zr.Reset(nil) == nil {
		decoders.Put(zr)
	}
}

// truncErr classifies a read error: an early end is ErrTruncated, a
// decoding error (zstd, tar) ErrMalformed; I/O errors and errors already
// classified pass through.
func truncErr(err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %v (the file ends early: copy or write it again)", ErrTruncated, err)
	case errors.As(err, &pe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, ErrMalformed) || errors.Is(err, ErrTruncated) || errors.Is(err, ErrTooLarge) ||
		errors.Is(err, ErrUnsafeName) || errors.Is(err, ErrMissing) || errors.Is(err, ErrDigest):
		return err
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

func (r *Reader) openFile() error {
	f, err := os.Open(r.path)
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	r.closers = append(r.closers, f)
	return r.openStream(f)
}

// openStream reads a single-file bundle from rd.
func (r *Reader) openStream(rd io.Reader) error {
	fr, err := newFrameReader(bufio.NewReaderSize(rd, 64<<10))
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	r.frame = fr
	zr, err := getZstdReader(fr)
	if err != nil {
		return r.fail("", -1, "open", err)
	}
	r.closers = append(r.closers, closerFunc(func() error { putZstdReader(zr); return nil }))
	return r.openTar(zr)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func (r *Reader) openTar(rd io.Reader) error {
	t := &tarStream{tr: tar.NewReader(rd)}
	name := func(want string) string {
		if t.bad != "" {
			return t.bad
		}
		return want
	}
	entry := func(want string, max int64) ([]byte, error) {
		if t.hdr == nil {
			if err := t.next(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil, wrapf(ErrMissing, "the bundle ends before %s", want)
				}
				return nil, truncErr(err)
			}
		}
		if t.hdr.Name != want {
			return nil, wrapf(ErrMalformed, "entry %q where %s belongs (entries are in a fixed order)", t.hdr.Name, want)
		}
		if t.hdr.Size > max {
			return nil, wrapf(ErrTooLarge, "%d bytes, at most %d", t.hdr.Size, max)
		}
		b := make([]byte, t.hdr.Size)
		if _, err := io.ReadFull(t.tr, b); err != nil {
			return nil, truncErr(err)
		}
		t.hdr = nil
		return b, nil
	}
	b, err := entry(ManifestFile, MaxJSON)
	if err != nil {
		return r.fail(name(ManifestFile), -1, "open", err)
	}
	if err := r.setManifest(b); err != nil {
		return err
	}
	if b, err = entry(MetadataFile, MaxJSON); err != nil {
		return r.fail(name(MetadataFile), -1, "open", err)
	}
	if err := r.setMetadata(b); err != nil {
		return err
	}
	if err := t.next(); err != nil {
		return r.fail(name(EventsFile), -1, "open", truncErr(err))
	}
	if _, ok := r.manifest.file(SnapshotFile); ok {
		if b, err = entry(SnapshotFile, MaxSnapshot); err != nil {
			return r.fail(name(SnapshotFile), -1, "open", err)
		}
		if err := r.setSnapshot(b); err != nil {
			return err
		}
		if err := t.next(); err != nil {
			return r.fail(name(EventsFile), -1, "open", truncErr(err))
		}
	}
	last := ""
	for t.hdr.Name != EventsFile {
		bn := t.hdr.Name
		d, isBlob := blobDigest(bn)
		if !isBlob || bn <= last {
			return r.fail(bn, -1, "open", wrapf(ErrMalformed, "entry %q out of order (blobs come sorted after the metadata and before %s)", bn, EventsFile))
		}
		last = bn
		if t.hdr.Size > MaxBlob {
			return r.fail(bn, -1, "open", wrapf(ErrTooLarge, "%d bytes, at most %d", t.hdr.Size, MaxBlob))
		}
		if r.keep || r.snap != nil {
			if err := r.mem.take(t.hdr.Size); err != nil {
				return r.fail(bn, -1, "open", err)
			}
			b, err := entry(bn, MaxBlob)
			if err != nil {
				return r.fail(bn, -1, "open", err)
			}
			if err := r.checkEntry(bn, b); err != nil {
				return r.fail(bn, -1, "open", err)
			}
			r.blobs[d] = b
		} else {
			// Verify only: hash the blob as it streams past.
			if err := r.checkStream(bn, t.tr, t.hdr.Size); err != nil {
				return r.fail(bn, -1, "open", truncErr(err))
			}
			t.hdr = nil
		}
		r.verified[d] = true
		if err := t.next(); err != nil {
			if errors.Is(err, io.EOF) {
				err = wrapf(ErrMissing, "the bundle ends before %s", EventsFile)
			}
			return r.fail(name(EventsFile), -1, "open", truncErr(err))
		}
	}
	for _, f := range r.manifest.Files {
		if d, ok := blobDigest(f.Path); ok && !r.verified[d] {
			return r.fail(f.Path, -1, "open", wrapf(ErrMissing, "listed in the manifest but absent"))
		}
	}
	e, _ := r.manifest.file(EventsFile)
	if t.hdr.Size != e.Size {
		return r.fail(EventsFile, -1, "open", wrapf(ErrDigest, "size %d, the manifest says %d", t.hdr.Size, e.Size))
	}
	// Nothing may follow events.log; draining also makes the zstd decoder
	// check its frame checksum.
	return r.startLogWithEnd(t.tr, func() error {
		if _, err := t.tr.Next(); !errors.Is(err, io.EOF) {
			if err == nil {
				return r.fail(t.hdr.Name, -1, "verify", wrapf(ErrUnsafeName, "an entry follows %s", EventsFile))
			}
			return r.fail("", -1, "verify", truncErr(err))
		}
		// Nothing may follow the end of the tar stream: the first byte
		// after it is an error (nothing more is decompressed). Reading to
		// the end of the frame makes the decoder check its checksum.
		var one [1]byte
		if n, err := io.ReadFull(rd, one[:]); n > 0 {
			return r.fail("", -1, "verify", wrapf(ErrMalformed, "data follows the end of the tar stream"))
		} else if !errors.Is(err, io.EOF) {
			return r.fail("", -1, "verify", truncErr(err))
		}
		if r.frame != nil {
			if err := r.frame.trailing(); err != nil {
				return r.fail("", -1, "verify", err)
			}
		}
		return nil
	})
}

func (r *Reader) startLogWithEnd(rd io.Reader, end func() error) error {
	e, _ := r.manifest.file(EventsFile)
	r.log = newLogReader(rd, e.Size)
	r.log.end = end
	if err := r.log.header(); err != nil {
		return r.fail(EventsFile, -1, "open", err)
	}
	return nil
}

// Metadata returns the bundle's metadata.
func (r *Reader) Metadata() Metadata { return r.meta }

// Manifest returns the bundle's manifest.
func (r *Reader) Manifest() Manifest { return *r.manifest }

// Snapshot returns the bundle's snapshot, or nil.
func (r *Reader) Snapshot() *Snapshot { return r.snap }

// Form returns the bundle's form.
func (r *Reader) Form() Form { return r.form }

// Digest returns the bundle digest: the blake3 of manifest.json, which
// covers every file.
func (r *Reader) Digest() events.Digest { return events.Sum(r.manifestB) }

// Close stops validating ahead, waits for that to end and releases the
// bundle's files.
func (r *Reader) Close() error {
	r.closed = true
	r.stopPrefetch()
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i].Close())
	}
	r.closers = nil
	return errors.Join(errs...)
}

// event returns the current record as step parsed it (the record is parsed
// once); Payload aliases internal buffers.
func (r *Reader) event() events.Event {
	e := r.r.event()
	if r.payload != nil {
		e.Payload = r.payload
	}
	return e
}

// step validates the next record and leaves it in r.stored, r.payload and
// r.r. Its errors are sticky.
func (r *Reader) step() error {
	if r.err != nil {
		return r.err
	}
	if r.done {
		return io.EOF
	}
	err := r.advance()
	switch {
	case err == io.EOF:
		r.done = true
	case err != nil:
		r.err = err
	}
	return err
}

func (r *Reader) advance() error {
	if r.index&4095 == 0 {
		if err := r.ctx.Err(); err != nil {
			return err
		}
	}
	idx := r.index
	stored, stored32, err := r.log.frame()
	if err == io.EOF {
		if err := r.finish(idx); err != nil {
			return err
		}
		return io.EOF
	}
	if err != nil {
		return r.fail(EventsFile, idx, "verify", err)
	}
	if err := scanRecord(stored, &r.r); err != nil {
		return r.fail(EventsFile, idx, "verify", err)
	}
	rr := &r.r
	if err := r.order.next(rr.seq, rr.parent, rr.kind, rr.lane); err != nil {
		return r.fail(EventsFile, idx, "verify", err)
	}
	r.stored, r.payload = stored, nil
	header := stored
	if rr.isBlobRef() {
		var err error
		if r.keep || (r.snap != nil && uint64(idx) < r.snap.Records) {
			r.payload, err = r.blob(rr.digest)
		} else {
			err = r.checkBlob(rr.digest)
		}
		if err != nil {
			return r.fail(blobName(rr.digest), idx, "verify", fmt.Errorf("record seq %d (%s): %w", rr.seq, excerpt.Quote(string(rr.kind)), err))
		}
	} else if len(rr.payload) > 0 {
		if len(rr.payload) >= BlobThreshold {
			return r.fail(EventsFile, idx, "verify", wrapf(ErrMalformed, "seq %d (%s): an inline payload of %d bytes; payloads of %d bytes or more are stored as blobs", rr.seq, excerpt.Quote(string(rr.kind)), len(rr.payload), BlobThreshold))
		}
		if d := events.Sum(rr.payload); d != rr.digest {
			return r.fail(EventsFile, idx, "verify", wrapf(ErrDigest, "seq %d (%s): payload digest %s does not match the payload (%s): the event was edited", rr.seq, excerpt.Quote(string(rr.kind)), rr.digest, d))
		}
		// The chained header is the record with the payload elided.
		r.header = append(r.header[:0], stored[:rr.payOff]...)
		r.header = append(r.header, 0)
		r.header = append(r.header, stored[rr.tailOff:]...)
		header = r.header
	}
	if r.keep {
		n := int64(len(rr.payload))
		if r.payload != nil {
			n = int64(len(r.payload))
		}
		if r.delivered += n; r.delivered > r.maxPayload {
			return r.fail(EventsFile, idx, "read", &LimitError{Limit: "MaxPayloadBytes", Value: r.maxPayload,
				What: "the payloads of the events read so far total"})
		}
	}
	head := r.chain.AddRecord(header)
	if head != events.Digest(stored32) {
		return r.fail(EventsFile, idx, "verify", wrapf(ErrChain, "seq %d (%s): chain hash %x, computed %s: this record or one before it was edited, dropped or reordered", rr.seq, excerpt.Quote(string(rr.kind)), stored32, head))
	}
	r.index++
	if r.snap != nil && uint64(idx) < r.snap.Records {
		return r.snapshotStep(idx)
	}
	if r.snap != nil && uint64(idx) == r.snap.Records && rr.seq <= r.snap.At {
		return r.fail(SnapshotFile, idx, "verify", wrapf(ErrMalformed, "the snapshot at seq %d ends before record %d, which has seq %d", r.snap.At, idx, rr.seq))
	}
	return nil
}

func (r *Reader) snapshotStep(idx int) error {
	e := r.event()
	if err := r.snapState.Apply(e); err != nil {
		return r.fail(EventsFile, idx, "verify", err)
	}
	if uint64(idx)+1 != r.snap.Records {
		return nil
	}
	if e.Seq != r.snap.At {
		return r.fail(SnapshotFile, idx, "verify", wrapf(ErrMalformed, "the snapshot claims seq %d after %d records, the log has seq %d", r.snap.At, r.snap.Records, e.Seq))
	}
	if r.chain.Head() != r.snap.Chain {
		return r.fail(SnapshotFile, idx, "verify", wrapf(ErrChain, "snapshot chain %s, the log's chain at record %d is %s", r.snap.Chain, idx, r.chain.Head()))
	}
	want, err1 := events.Canonical(r.snapState)
	got, err2 := events.Canonical(r.snap.State)
	if err := errors.Join(err1, err2); err != nil {
		return r.fail(SnapshotFile, idx, "verify", err)
	}
	if !bytes.Equal(want, got) {
		return r.fail(SnapshotFile, idx, "verify", wrapf(ErrDigest, "the snapshot's state differs from the state rebuilt from the first %d records: the snapshot was edited", r.snap.Records))
	}
	return nil
}

// checkBlob verifies a blob without keeping its bytes.
func (r *Reader) checkBlob(d events.Digest) error {
	if r.verified[d] {
		return nil
	}
	name, err := r.dirBlob(d)
	if err != nil {
		return err
	}
	f, size, err := r.openDirFile(name, MaxBlob)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := r.checkStream(name, f, size); err != nil {
		return err
	}
	r.verified[d] = true
	return nil
}

// dirBlob returns the name of blob d, which must be listed in the manifest
// of a directory bundle (the single-file form's blobs were all read at
// Open).
func (r *Reader) dirBlob(d events.Digest) (string, error) {
	name := blobName(d)
	if _, ok := r.manifest.file(name); !ok || r.form == FormFile {
		return "", wrapf(ErrMissing, "%s is not in the bundle", name)
	}
	return name, nil
}

// checkStream hashes a file of the given size from rd and checks it
// against the manifest (whose digest of a blob is its name: parseManifest).
func (r *Reader) checkStream(name string, rd io.Reader, size int64) error {
	e, ok := r.manifest.file(name)
	if !ok {
		return wrapf(ErrUnsafeName, "present in the bundle but not listed in the manifest")
	}
	if size > MaxBlob {
		return wrapf(ErrTooLarge, "%d bytes, at most %d", size, MaxBlob)
	}
	if size != e.Size {
		return wrapf(ErrDigest, "size %d, the manifest says %d", size, e.Size)
	}
	h := blake3.New(32, nil)
	n, err := io.Copy(h, io.LimitReader(rd, size+1))
	if err != nil {
		return err
	}
	if n != size {
		return wrapf(ErrTruncated, "%d bytes read, %d expected", n, size)
	}
	d := events.Digest(h.Sum(nil))
	if d != e.Digest {
		return wrapf(ErrDigest, "digest %s, the manifest says %s", d, e.Digest)
	}
	return nil
}

// blob returns the verified bytes of a blob, shared by every event that
// refers to it: the single-file form read them all at Open; the directory
// form reads and checks each at its first reference and keeps it, within
// Options.MaxBufferedBlobs.
func (r *Reader) blob(d events.Digest) ([]byte, error) {
	if b, ok := r.blobs[d]; ok {
		return b, nil
	}
	name, err := r.dirBlob(d)
	if err != nil {
		return nil, err
	}
	e, _ := r.manifest.file(name)
	if err := r.mem.take(e.Size); err != nil {
		return nil, err
	}
	b, err := r.readDirFile(name, MaxBlob)
	if err != nil {
		return nil, err
	}
	// checkEntry hashes the blob once; the manifest's digest of a blob is
	// its name (parseManifest).
	if err := r.checkEntry(name, b); err != nil {
		return nil, err
	}
	r.verified[d] = true
	r.blobs[d] = b
	return b, nil
}

// finish runs the end-of-log checks.
func (r *Reader) finish(idx int) error {
	count, head, err := r.log.trailer()
	if err != nil {
		return r.fail(EventsFile, idx, "verify", err)
	}
	if count != uint64(idx) {
		return r.fail(EventsFile, idx, "verify", wrapf(ErrTruncated, "the trailer counts %d records, the log holds %d", count, idx))
	}
	if head != r.chain.Head() {
		return r.fail(EventsFile, idx, "verify", wrapf(ErrChain, "trailer chain head %s, computed %s", head, r.chain.Head()))
	}
	if count != r.manifest.Events || head != r.manifest.Chain {
		return r.fail(ManifestFile, -1, "verify", wrapf(ErrChain, "the manifest says %d events with chain %s, the log holds %d with chain %s", r.manifest.Events, r.manifest.Chain, count, head))
	}
	if r.snap != nil && r.snap.Records > count {
		return r.fail(SnapshotFile, -1, "verify", wrapf(ErrMalformed, "the snapshot covers %d records, the log holds %d", r.snap.Records, count))
	}
	e, _ := r.manifest.file(EventsFile)
	if r.log.size != e.Size {
		return r.fail(EventsFile, -1, "verify", wrapf(ErrDigest, "size %d, the manifest says %d", r.log.size, e.Size))
	}
	if d := r.log.digest(); d != e.Digest {
		return r.fail(EventsFile, -1, "verify", wrapf(ErrDigest, "digest %s, the manifest says %s", d, e.Digest))
	}
	if r.log.end != nil {
		if err := r.log.end(); err != nil {
			return r.fail(EventsFile, -1, "verify", err)
		}
	}
	// Blobs listed but never referenced are still checked.
	if r.form == FormDir {
		for _, f := range r.manifest.Files {
			if d, ok := blobDigest(f.Path); ok {
				if err := r.checkBlob(d); err != nil {
					return r.fail(f.Path, -1, "verify", err)
				}
			}
		}
	}
	return nil
}

// logReader reads events.log frames, hashing the file as it goes.
type logReader struct {
	rd   io.Reader
	buf  []byte
	lo   int
	hi   int
	eof  bool
	size int64
	// hash digests the file; buf[:hashed] is already hashed. Bytes are
	// hashed in large pieces (when the buffer is compacted, and at the
	// end): blake3 is several times faster on long inputs than on the
	// short reads a decompressor returns.
	hash   *blake3.Hasher
	hashed int
	end    func() error
}

const (
	logChunk = 1 << 20 // read buffer
	logSlack = 64 << 10
)

// newLogReader reads a log of the given size (a hint from the manifest: a
// small log gets a small buffer, which grows when a record needs it).
func newLogReader(rd io.Reader, size int64) *logReader {
	n := int(min(max(size, 0)+1, logChunk))
	return &logReader{rd: rd, buf: make([]byte, n), hash: blake3.New(32, nil)}
}

// hashRead hashes what has been read but not yet hashed.
func (l *logReader) hashRead() {
	if l.hash != nil && l.hashed < l.hi {
		l.hash.Write(l.buf[l.hashed:l.hi])
	}
	l.hashed = l.hi
}

// digest returns the blake3-256 of everything read.
func (l *logReader) digest() events.Digest {
	l.hashRead()
	return events.Digest(l.hash.Sum(nil))
}

// fill makes at least n bytes available unless the file ends first.
func (l *logReader) fill(n int) error {
	for l.hi-l.lo < n && !l.eof {
		if room := len(l.buf) - l.hi; room < min(logSlack, len(l.buf)/4) || room < n-(l.hi-l.lo) {
			l.hashRead()
			if l.lo > 0 {
				copy(l.buf, l.buf[l.lo:l.hi])
				l.hi -= l.lo
				l.lo = 0
				l.hashed = l.hi
			}
			if n > len(l.buf) {
				nb := make([]byte, max(n, 2*len(l.buf)))
				copy(nb, l.buf[:l.hi])
				l.buf = nb
			}
		}
		m, err := l.rd.Read(l.buf[l.hi:])
		if m > 0 {
			l.size += int64(m)
			l.hi += m
		}
		if err == io.EOF {
			l.eof = true
		} else if err != nil {
			return truncErr(err)
		}
	}
	return nil
}

func (l *logReader) header() error {
	if err := l.fill(len(logMagic)); err != nil {
		return err
	}
	if l.hi-l.lo < len(logMagic) || string(l.buf[l.lo:l.lo+len(logMagic)]) != logMagic {
		return wrapf(ErrMalformed, "does not start with the events.log magic %q", logMagic)
	}
	l.lo += len(logMagic)
	return nil
}

func (l *logReader) uvarint(what string) (uint64, error) {
	if err := l.fill(binary.MaxVarintLen64); err != nil {
		return 0, err
	}
	v, n := binary.Uvarint(l.buf[l.lo:l.hi])
	if n == 0 && l.hi == l.lo {
		return 0, wrapf(ErrTruncated, "the file ends where the %s should be: records or the trailer are missing (copy or write it again)", what)
	}
	if n == 0 {
		return 0, wrapf(ErrTruncated, "the file ends inside the %s (copy or write it again)", what)
	}
	if n < 0 || n != uvarintLen(v) {
		return 0, wrapf(ErrMalformed, "bad %s varint", what)
	}
	l.lo += n
	return v, nil
}

// frame returns the next stored record and its chain hash, or io.EOF when
// the trailer marker is next. The slices are valid until the next call.
func (l *logReader) frame() ([]byte, []byte, error) {
	n, err := l.uvarint("record length")
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	if n > MaxRecord {
		return nil, nil, wrapf(ErrTooLarge, "record of %d bytes, at most %d", n, MaxRecord)
	}
	need := int(n) + len(events.Digest{})
	if err := l.fill(need); err != nil {
		return nil, nil, err
	}
	if l.hi-l.lo < need {
		return nil, nil, wrapf(ErrTruncated, "the file ends inside a record (%d of %d bytes): copy or write it again", l.hi-l.lo, need)
	}
	b := l.buf[l.lo : l.lo+need]
	l.lo += need
	return b[:n:n], b[n:], nil
}

func (l *logReader) trailer() (uint64, events.Digest, error) {
	count, err := l.uvarint("trailer count")
	if err != nil {
		return 0, events.Digest{}, err
	}
	var head events.Digest
	if err := l.fill(len(head) + 1); err != nil {
		return 0, head, err
	}
	if l.hi-l.lo < len(head) {
		return 0, head, wrapf(ErrTruncated, "the file ends inside the trailer")
	}
	copy(head[:], l.buf[l.lo:])
	l.lo += len(head)
	if err := l.fill(1); err != nil {
		return 0, head, err
	}
	if l.hi != l.lo {
		return 0, head, wrapf(ErrMalformed, "%d bytes after the trailer", l.hi-l.lo)
	}
	return count, head, nil
}

// orderCheck enforces the ordering rules: seqs start at 1 and are dense;
// equal seqs (lanes merged from several sources) are ordered by lane; a
// parent comes before its child; kinds are not empty.
type orderCheck struct {
	n    int
	seq  uint64
	lane []byte
}

func (o *orderCheck) next(seq, parent uint64, kind, lane []byte) error {
	switch {
	case len(kind) == 0:
		return wrapf(ErrRequired, "seq %d: empty kind", seq)
	case o.n == 0 && seq != 1:
		return wrapf(ErrOrder, "the first event has seq %d, want 1 (an event was dropped?)", seq)
	case o.n > 0 && seq == o.seq && bytes.Compare(lane, o.lane) <= 0:
		return wrapf(ErrOrder, "seq %d lane %q after seq %d lane %q: equal seqs must be in increasing lane order", seq, lane, o.seq, o.lane)
	case o.n > 0 && seq != o.seq && seq != o.seq+1:
		return wrapf(ErrOrder, "seq %d follows seq %d: seqs must be dense and increasing (an event was dropped or reordered)", seq, o.seq)
	case parent >= seq:
		return wrapf(ErrOrder, "seq %d: parent %d does not come before it", seq, parent)
	}
	o.n++
	o.seq = seq
	o.lane = append(o.lane[:0], lane...)
	return nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
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

// openStreamBytes opens a single-file bundle held in memory; label names it
// in errors. With tarOnly the bytes are the tar stream, not compressed.
func openStreamBytes(ctx context.Context, label string, b []byte, tarOnly, keep bool) (*Reader, error) {
	r := newReader(ctx, label, keep, Options{}, Options{}.newBudget())
	r.form = FormFile
	var err error
	if tarOnly {
		err = r.openTar(bytes.NewReader(b))
	} else {
		err = r.openStream(bytes.NewReader(b))
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}
