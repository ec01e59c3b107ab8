package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/ledgerdb"
)

// fileStore is the embedded store: one file of canonical entries, one a
// line, appended under an exclusive file lock and fsynced.
type fileStore struct {
	path string
	now  func() time.Time

	// write writes b to f: (*os.File).Write, replaced by tests to inject
	// a failure part-way.
	write func(f *os.File, b []byte) (int, error)

	mu sync.Mutex // serialises this handle's goroutines; the file lock does processes and handles
	// The head as last seen, valid while the file is the same and as long.
	cacheFile os.FileInfo
	cacheSize int64
	headSeq   uint64
	headHash  string
}

func openFile(path string, now func() time.Time) (*fileStore, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ledgerdb.ErrBadDSN, path)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: directory %s of ledger %s does not exist; create it first", ledgerdb.ErrBadDSN, dir, path)
	}
	return &fileStore{path: path, now: now, write: (*os.File).Write}, nil
}

func (s *fileStore) Close() error { return nil }

// lockFile takes the exclusive lock and opens the ledger for appending,
// refusing a symbolic link for either (see openNoFollow). The lock is held
// on a file beside the ledger (its path plus ".lock"),
// never replaced, so a retention that replaces the ledger cannot slip
// between the lock and the open, and on Windows, where locks are
// mandatory, readers of the ledger are never refused. Unlocking releases
// the lock; the caller closes f first.
func (s *fileStore) lockFile(ctx context.Context) (f *os.File, unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := refuseLink(s.path + lockSuffix); err != nil {
		return nil, nil, err
	}
	lk := newLock(s.path + lockSuffix)
	if err := lockContext(ctx, lk.TryLock, lk.Lock); err != nil {
		return nil, nil, fmt.Errorf("ledger: lock %s: %w", lk.Path(), err)
	}
	if err := checkLock(lk); err != nil {
		return nil, nil, err
	}
	f, err = openNoFollow(s.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		lk.Unlock()
		if errors.Is(err, errLink) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("ledger: open %s: %w", s.path, err)
	}
	return f, func() { lk.Unlock() }, nil
}

// lockSuffix names the lock file beside a ledger.
const lockSuffix = ".lock"

// lockRetry bounds the pause between two tries of a lock another holds.
const lockRetry = 4 * time.Millisecond

// lockContext takes a file lock with try while another process or handle
// holds it, until ctx ends: at once, then after 1 ms, the pause doubling
// to lockRetry. A ctx that cannot end waits in block (flock(2) or
// LockFileEx), which wakes at once when the holder releases the lock.
func lockContext(ctx context.Context, try func() (bool, error), block func() error) error {
	if ctx.Done() == nil {
		return block()
	}
	for pause := time.Millisecond; ; pause = min(2*pause, lockRetry) {
		if ok, err := try(); ok || err != nil {
			return err
		}
		wait, cancel := context.WithTimeout(ctx, pause)
		<-wait.Done()
		cancel()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("another appender held it for as long as this one could wait: %w", err)
		}
	}
}

// head returns the last entry's seq and hash, from the cache when the file
// is the one last seen and has not grown.
func (s *fileStore) head(f *os.File) (uint64, string, os.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, "", nil, fmt.Errorf("ledger: stat %s: %w", s.path, err)
	}
	if fi.Size() == 0 {
		return 0, "", fi, nil
	}
	if s.cacheFile != nil && os.SameFile(s.cacheFile, fi) && s.cacheSize == fi.Size() {
		return s.headSeq, s.headHash, fi, nil
	}
	last, err := lastLine(f, fi.Size())
	if errors.Is(err, errTorn) {
		return 0, "", nil, fmt.Errorf("%w: %s: %w", errDamaged, s.path, err)
	}
	if err != nil {
		return 0, "", nil, fmt.Errorf("%w: %s: %v; run ledger verify", errDamaged, s.path, err)
	}
	e, _, err := decodeEntry(last)
	if err != nil {
		return 0, "", nil, fmt.Errorf("%w: %s: last line: %v; run ledger verify", errDamaged, s.path, err)
	}
	return e.Seq, e.Hash, fi, nil
}

// lastLine reads the last newline-terminated line of a file of size
// bytes, reading backwards from the end in growing steps and at most
// ledgerdb.MaxEntryBytes+2 bytes.
func lastLine(f *os.File, size int64) ([]byte, error) {
	limit := min(size, int64(ledgerdb.MaxEntryBytes)+2)
	for n := min(limit, 4096); ; n = min(limit, n*8) {
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, size-n); err != nil {
			return nil, err
		}
		if buf[n-1] != '\n' {
			return nil, fmt.Errorf("%w: the file does not end with a newline (an append was cut short at byte %d); run ledger repair, which drops the torn line and records it", errTorn, size)
		}
		body := buf[:n-1]
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			return body[i+1:], nil
		}
		if n == size {
			return body, nil // the only line
		}
		if n == limit {
			return nil, fmt.Errorf("the last line is longer than %d bytes", ledgerdb.MaxEntryBytes)
		}
	}
}

func (s *fileStore) Append(ctx context.Context, e Entry) (Entry, error) {
	e, err := checkNew(e)
	if err != nil {
		return Entry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, unlock, err := s.lockFile(ctx)
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	defer f.Close()
	seq, prev, fi, err := s.head(f)
	if err != nil {
		return Entry{}, err
	}
	sealed, b, err := seal(e, seq+1, prev, s.now())
	if err != nil {
		return Entry{}, err
	}
	b = append(b, '\n')
	if _, err := s.write(f, b); err != nil {
		return Entry{}, s.undo(f, fi.Size(), fmt.Errorf("ledger: append to %s: %w", s.path, err))
	}
	if err := f.Sync(); err != nil {
		return Entry{}, s.undo(f, fi.Size(), fmt.Errorf("ledger: sync %s: %w", s.path, err))
	}
	if fi.Size() == 0 {
		syncDir(filepath.Dir(s.path))
	}
	s.cacheFile, s.cacheSize, s.headSeq, s.headHash = fi, fi.Size()+int64(len(b)), sealed.Seq, sealed.Hash
	return sealed, nil
}

// undo removes what a failed append wrote (a partial line, on ENOSPC or
// EFBIG) by truncating f back to size while the lock is still held, so
// the failure leaves the ledger as it was and appendable.
func (s *fileStore) undo(f *os.File, size int64, err error) error {
	terr := f.Truncate(size)
	if terr == nil {
		terr = f.Sync()
	}
	if terr != nil {
		return fmt.Errorf("%w; removing the partial line failed too (%v): run ledger repair", err, terr)
	}
	return err
}

// syncDir makes a new file's directory entry durable, best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// snapshot opens the file for reading and returns its length as of a
// moment no append was in flight; reading up to it never sees a partial
// line, and a later retention does not disturb the open file. Where the
// lock file cannot be created (a read-only copy of a ledger), it reads
// without the lock: an append in flight is then seen as a torn last line.
func (s *fileStore) snapshot(ctx context.Context) (*os.File, int64, error) {
	if err := refuseLink(s.path + lockSuffix); err != nil {
		return nil, 0, err
	}
	lk := newLock(s.path + lockSuffix)
	if err := lockContext(ctx, lk.TryRLock, lk.RLock); err == nil {
		if err := checkLock(lk); err != nil {
			return nil, 0, err
		}
		defer lk.Unlock()
	} else if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("ledger: lock %s: %w", lk.Path(), err)
	}
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("ledger: no ledger at %s (nothing was appended yet): %w", s.path, err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("ledger: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("ledger: stat %s: %w", s.path, err)
	}
	return f, fi.Size(), nil
}

func (s *fileStore) Scan(ctx context.Context, from, to uint64, fn func(Record) error) error {
	f, size, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	defer f.Close()
	return scanLines(ctx, io.LimitReader(f, size), from, to, fn)
}

// scanLines reads records one a line. A line that cannot be read as an
// entry is given the seq after the previous line's for range filtering.
func scanLines(ctx context.Context, r io.Reader, from, to uint64, fn func(Record) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line int64
	var seq uint64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		body, err := readLine(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("ledger: read: %w", err)
		}
		line++
		rec := Record{Line: line, Body: body}
		seq++
		if n, ok := peekSeq(body); ok {
			rec.Seq, seq = n, n
		}
		if to != 0 && seq > to {
			return nil
		}
		if seq < from {
			continue
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// readLine returns the next line without its newline, keeping at most
// ledgerdb.MaxEntryBytes+1 bytes of it (enough for the reader to see it is too
// long). A last line without a newline is returned as it is.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := ledgerdb.MaxEntryBytes + 1 - len(out); room > 0 {
			out = append(out, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(out) > 0:
			return out, nil
		case err != nil:
			return nil, err
		}
		return bytes.TrimSuffix(out, []byte("\n")), nil
	}
}

func peekSeq(body []byte) (uint64, bool) {
	var p struct {
		Seq uint64 `json:"seq"`
	}
	if len(body) > ledgerdb.MaxEntryBytes || json.Unmarshal(body, &p) != nil || p.Seq == 0 {
		return 0, false
	}
	return p.Seq, true
}

// Retain rewrites the file without the dropped entries and with the admin
// entry appended, atomically, under the exclusive lock.
func (s *fileStore) Retain(ctx context.Context, before uint64, reason string) (Entry, error) {
	r := retention{Before: before, Reason: reason}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, unlock, err := s.lockFile(ctx)
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	defer f.Close()
	headSeq, headHash, fi, err := s.head(f)
	if err != nil {
		return Entry{}, err
	}
	var admin Entry
	staged, err := atomicfile.Config{}.StageFunc(s.path, 0o644, func(w io.Writer) error {
		var err error
		admin, err = s.rewrite(ctx, io.NewSectionReader(f, 0, fi.Size()), w, r, headSeq, headHash)
		return err
	})
	if err != nil {
		return Entry{}, err
	}
	if err := staged.Commit(); err != nil {
		return Entry{}, err
	}
	s.cacheFile = nil
	return admin, nil
}

// rewrite copies the kept lines of src to w and appends the admin entry.
func (s *fileStore) rewrite(ctx context.Context, src io.Reader, w io.Writer, r retention, headSeq uint64, headHash string) (Entry, error) {
	bw := bufio.NewWriter(w)
	var first, want uint64
	var boundary string
	err := scanLines(ctx, src, 0, 0, func(rec Record) error {
		e, _, err := decodeEntry(rec.Body)
		if err != nil || (want != 0 && e.Seq != want) {
			return fmt.Errorf("%w at %s; retention refuses a ledger that does not verify: run ledger verify", errDamaged, rec.where())
		}
		if first == 0 {
			first = e.Seq
		}
		want = e.Seq + 1
		if e.Seq == r.Before-1 {
			boundary = e.Hash
		}
		if e.Seq < r.Before {
			return nil
		}
		_, err = bw.Write(append(rec.Body, '\n'))
		return err
	})
	if err != nil {
		return Entry{}, err
	}
	admin, err := retentionEntry(r, first, headSeq, boundary)
	if err != nil {
		return Entry{}, err
	}
	sealed, b, err := seal(admin, headSeq+1, headHash, s.now())
	if err != nil {
		return Entry{}, err
	}
	if _, err := bw.Write(append(b, '\n')); err != nil {
		return Entry{}, err
	}
	return sealed, bw.Flush()
}

// retentionEntry checks r against the ledger's first and head seqs and
// returns the admin entry that records it.
func retentionEntry(r retention, first, head uint64, boundary string) (Entry, error) {
	switch {
	case r.Reason == "":
		return Entry{}, fmt.Errorf("%w: give a reason; it is recorded in the ledger", errBadRetention)
	case head == 0 || r.Before <= first:
		return Entry{}, fmt.Errorf("%w: nothing before seq %d to drop (the first entry is %d)", errBadRetention, r.Before, first)
	case r.Before > head+1:
		return Entry{}, fmt.Errorf("%w: seq %d is past the head %d", errBadRetention, r.Before, head)
	}
	return Entry{Kind: kindAdmin, Admin: &Admin{
		Action: actionRetain, DroppedFrom: first, DroppedTo: r.Before - 1, Boundary: boundary, Reason: r.Reason,
	}}, nil
}
