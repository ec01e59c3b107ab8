package bundle

import (
	"encoding/binary"
	"io"

	"lukechampine.com/blake3"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/eventrec"
)

// events.log framing:
//
//	log     = magic run*
//	run     = frame* trailer
//	frame   = uvarint(len(stored)) stored chain     ; len(stored) >= 1
//	trailer = 0x00 uvarint(count) head

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
		return wrapf(errMalformed, "does not start with the events.log magic %q", logMagic)
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
		return 0, wrapf(errTruncated, "the file ends where the %s should be: records or the trailer are missing (copy or write it again)", what)
	}
	if n == 0 {
		return 0, wrapf(errTruncated, "the file ends inside the %s (copy or write it again)", what)
	}
	if n < 0 || n != eventrec.UvarintLen(v) {
		return 0, wrapf(errMalformed, "bad %s varint", what)
	}
	l.lo += n
	return v, nil
}

// frame returns the next stored record and its chain hash, or io.EOF after
// reading the marker (0x00) of a run's trailer. The slices are valid until
// the next call.
func (l *logReader) frame() ([]byte, []byte, error) {
	n, err := l.uvarint("record length")
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	if n > maxRecord {
		return nil, nil, wrapf(errTooLarge, "record of %d bytes, at most %d", n, maxRecord)
	}
	need := int(n) + len(events.Digest{})
	if err := l.fill(need); err != nil {
		return nil, nil, err
	}
	if l.hi-l.lo < need {
		return nil, nil, wrapf(errTruncated, "the file ends inside a record (%d of %d bytes): copy or write it again", l.hi-l.lo, need)
	}
	b := l.buf[l.lo : l.lo+need]
	l.lo += need
	return b[:n:n], b[n:], nil
}

// trailer reads the rest of a run's trailer, after its 0x00 marker: the
// record count and the chain head.
func (l *logReader) trailer() (uint64, events.Digest, error) {
	count, err := l.uvarint("trailer count")
	if err != nil {
		return 0, events.Digest{}, err
	}
	var head events.Digest
	if err := l.fill(len(head)); err != nil {
		return 0, head, err
	}
	if l.hi-l.lo < len(head) {
		return 0, head, wrapf(errTruncated, "the file ends inside a run's trailer")
	}
	copy(head[:], l.buf[l.lo:])
	l.lo += len(head)
	return count, head, nil
}

// atEnd reports an error when anything follows the last run's trailer.
func (l *logReader) atEnd() error {
	if err := l.fill(1); err != nil {
		return err
	}
	if l.hi != l.lo {
		return wrapf(errMalformed, "%d bytes after the last run's trailer", l.hi-l.lo)
	}
	return nil
}
