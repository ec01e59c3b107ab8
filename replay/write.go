package replay

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codegenie/codegenie/internal/safename"

	"github.com/klauspost/compress/zstd"
	"lukechampine.com/blake3"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/atomicfile"
)

// maxWindow is the zstd window the writer uses and the most the reader
// accepts, which bounds the reader's memory.
const maxWindow = 8 << 20

// Bundle is a run in memory: what Write writes and Load returns.
type Bundle struct {
	Metadata Metadata
	Snapshot *Snapshot // optional
	Events   []events.Event
}

// plan is a bundle encoded up to events.log, whose bytes are produced on
// demand (twice: once to digest it, once to write it).
type plan struct {
	files    []planFile // sorted by name, events.log included
	manifest []byte
	evs      iter.Seq[events.Event]
}

type planFile struct {
	name string
	data []byte // nil for events.log
	size int64
}

// writeLog writes events.log and returns the chain head (events.Chain).
func writeLog(w io.Writer, evs iter.Seq[events.Event]) (events.Digest, error) {
	var c events.Chainer
	buf := make([]byte, 0, 4096)
	sbuf := make([]byte, 0, 256)
	full := make([]byte, 0, 4096)
	if _, err := io.WriteString(w, logMagic); err != nil {
		return events.Digest{}, err
	}
	n := uint64(0)
	for e := range evs {
		n++
		full = events.AppendRecord(full[:0], e)
		payload := e.Payload
		e.Payload = nil
		sbuf = events.AppendRecord(sbuf[:0], e)
		head := c.AddRecord(sbuf)
		stored := full
		if len(payload) >= BlobThreshold {
			stored = sbuf
		}
		buf = binary.AppendUvarint(buf[:0], uint64(len(stored)))
		buf = append(buf, stored...)
		buf = append(buf, head[:]...)
		if _, err := w.Write(buf); err != nil {
			return events.Digest{}, err
		}
	}
	buf = binary.AppendUvarint(buf[:0], 0)
	buf = binary.AppendUvarint(buf, n)
	head := c.Head()
	buf = append(buf, head[:]...)
	_, err := w.Write(buf)
	return head, err
}

type countHasher struct {
	h *blake3.Hasher
	n int64
}

func (c *countHasher) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.h.Write(b)
}

func makePlan(b *Bundle) (*plan, error) {
	return makePlanSeq(b.Metadata, b.Snapshot, b.Events, slices.Values(b.Events))
}

// makePlanSeq plans a bundle whose events come from evs, which is iterated
// three times; all is needed only for a snapshot.
func makePlanSeq(meta Metadata, snap *Snapshot, all []events.Event, evs iter.Seq[events.Event]) (*plan, error) {
	if err := meta.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", MetadataFile, err)
	}
	var o orderCheck
	blobs := map[events.Digest][]byte{}
	count := 0
	i := -1
	for e := range evs {
		i++
		count++
		if err := o.next(e.Seq, e.Parent, []byte(e.Kind), []byte(e.Lane)); err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", EventsFile, i, err)
		}
		if err := e.Verify(); err != nil {
			return nil, fmt.Errorf("%s: record %d: %w: %v", EventsFile, i, ErrDigest, err)
		}
		if len(e.Kind) > MaxString || len(e.Lane) > MaxString || len(e.AuditEventID) > MaxString || len(e.BudgetTokenID) > MaxString {
			return nil, fmt.Errorf("%s: record %d: %w: a string field is longer than %d bytes", EventsFile, i, ErrTooLarge, MaxString)
		}
		if len(e.Payload) >= BlobThreshold {
			if len(e.Payload) > MaxBlob {
				return nil, fmt.Errorf("%s: record %d: %w: payload of %d bytes, at most %d", EventsFile, i, ErrTooLarge, len(e.Payload), MaxBlob)
			}
			blobs[e.PayloadDigest] = e.Payload
		}
	}
	if len(blobs) > MaxFiles-4 {
		return nil, fmt.Errorf("%w: %d blobs, at most %d", ErrTooLarge, len(blobs), MaxFiles-4)
	}
	p := &plan{evs: evs}
	metaB, err := events.Canonical(meta)
	if err != nil {
		return nil, err
	}
	p.files = append(p.files, planFile{name: MetadataFile, data: metaB})
	if snap != nil {
		want, err := MakeSnapshot(all, snap.At)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", SnapshotFile, err)
		}
		got, err1 := events.Canonical(snap)
		w, err2 := events.Canonical(want)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if !bytes.Equal(got, w) {
			return nil, fmt.Errorf("%s: %w: the snapshot does not match the events (build it with MakeSnapshot)", SnapshotFile, ErrMalformed)
		}
		p.files = append(p.files, planFile{name: SnapshotFile, data: got})
	}
	for d, data := range blobs {
		p.files = append(p.files, planFile{name: blobName(d), data: data})
	}
	if err := p.seal(count); err != nil {
		return nil, err
	}
	return p, nil
}

// seal adds events.log to p.files (count records from p.evs) and encodes
// the manifest of every file.
func (p *plan) seal(count int) error {
	ch := &countHasher{h: blake3.New(32, nil)}
	head, err := writeLog(ch, p.evs)
	if err != nil {
		return err
	}
	p.files = append(p.files, planFile{name: EventsFile, size: ch.n})
	slices.SortFunc(p.files, func(a, b planFile) int { return cmp.Compare(a.name, b.name) })
	m := Manifest{Format: Format, Events: uint64(count), Chain: head}
	for i := range p.files {
		f := &p.files[i]
		var d events.Digest
		if f.data != nil {
			f.size = int64(len(f.data))
			d = events.Sum(f.data)
		} else {
			d = events.Digest(ch.h.Sum(nil))
		}
		m.Files = append(m.Files, FileEntry{Path: f.name, Size: f.size, Digest: d})
	}
	p.manifest, err = m.encode()
	return err
}

// streamOrder is the order of entries in the single-file form: manifest,
// metadata, snapshot, blobs sorted by name, events.log.
func (p *plan) streamOrder() []planFile {
	rank := func(n string) int {
		switch {
		case n == MetadataFile:
			return 0
		case n == SnapshotFile:
			return 1
		case strings.HasPrefix(n, BlobDir+"/"):
			return 2
		}
		return 3
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

// Write writes b as a directory bundle at dir (WriteOptions.Write with the
// zero options: it refuses to replace anything).
func Write(ctx context.Context, dir string, b *Bundle) error {
	return WriteOptions{}.Write(ctx, dir, b)
}

// Write writes b as a directory bundle at dir. It builds the bundle in a
// temporary directory beside dir and puts it in place in one step
// (internal/atomicfile), so dir always holds the old bundle or the new
// one, never a half-written one; leftovers of an interrupted write are
// removed by the next. It refuses an existing dir unless it is a bundle
// and o.Force is set, and refuses events that would not verify.
func (o WriteOptions) Write(ctx context.Context, dir string, b *Bundle) error {
	p, err := makePlan(b)
	if err != nil {
		return writeErr(dir, err)
	}
	return p.writeDir(ctx, dir, o.Force)
}

func (p *plan) writeDir(ctx context.Context, dir string, force bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkReplace(dir, force); err != nil {
		return writeErr(dir, err)
	}
	err := atomicfile.WriteDir(dir, 0o755, func(tmp string) error {
		if slices.ContainsFunc(p.files, func(f planFile) bool { return strings.HasPrefix(f.name, BlobDir+"/") }) {
			if err := os.Mkdir(filepath.Join(tmp, BlobDir), 0o755); err != nil {
				return err
			}
		}
		all := append(slices.Clone(p.files), planFile{name: ManifestFile, data: p.manifest})
		for _, f := range all {
			if err := writeNew(filepath.Join(tmp, filepath.FromSlash(f.name)), func(w io.Writer) error {
				if f.data != nil {
					_, err := w.Write(f.data)
					return err
				}
				_, err := writeLog(w, p.evs)
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
	if err := entry(ManifestFile, int64(len(p.manifest)), data(p.manifest)); err != nil {
		return err
	}
	for _, f := range p.streamOrder() {
		fill := data(f.data)
		if f.data == nil {
			fill = func(w io.Writer) error { _, err := writeLog(w, p.evs); return err }
		}
		if err := entry(f.name, f.size, fill); err != nil {
			return err
		}
	}
	return tw.Close()
}

// WriteFile writes b as a single-file bundle at path (WriteOptions.WriteFile
// with the zero options: it refuses to replace anything).
func WriteFile(ctx context.Context, path string, b *Bundle) error {
	return WriteOptions{}.WriteFile(ctx, path, b)
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
func (o WriteOptions) WriteFile(ctx context.Context, path string, b *Bundle) error {
	p, err := makePlan(b)
	if err != nil {
		return writeErr(path, err)
	}
	return p.writeFile(ctx, path, o.Force)
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
	s, err := atomicfile.Options{ReplaceDir: true}.StageFunc(path, 0o644, func(w io.Writer) error {
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

// FileExt is the extension WriteRun gives single-file bundles.
const FileExt = ".bundle.zst"

// WriteRun writes one run as a single-file bundle in dir and returns its
// path: dir/<scenario>-<run>-<first 12 hex digits of the stripped chain
// digest>.bundle.zst, with unsafe characters replaced. It fills an empty
// meta.GoVersion with runtime.Version() and an empty meta.Status with
// CAPTURED. It is what the gate calls to leave evidence of a divergence.
func WriteRun(dir string, meta Metadata, evs []events.Event) (string, error) {
	if meta.GoVersion == "" {
		meta.GoVersion = runtime.Version()
	}
	if meta.Status == "" {
		meta.Status = StatusCaptured
	}
	name := safename.Of(meta.Scenario)
	if meta.Run != "" {
		name += "-" + safename.Of(meta.Run)
	}
	name += "-" + events.ChainDigest(evs).String()[:12] + FileExt
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", writeErr(path, err)
	}
	// The name is derived from the run, so a bundle already there is an
	// earlier write of the same run: replace it (never anything else).
	return path, WriteOptions{Force: true}.WriteFile(context.Background(), path, &Bundle{Metadata: meta, Events: evs})
}
