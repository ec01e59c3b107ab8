package bundle

import (
	"io"
	"sync"

	"lukechampine.com/blake3"

	"github.com/codegenie/codegenie/events"
)

// blobStore holds the blobs a reader hands out and remembers the ones it
// has checked. The single-file form puts every blob in at Open (they come
// before the log); the directory form reads each at its first use. Either
// way a blob is read and hashed once and its bytes are shared by every
// event (or output) that refers to it, within the memory budget.
type blobStore struct {
	mu       sync.Mutex // Reader.Output may run beside the prefetcher
	kept     map[events.Digest][]byte
	verified map[events.Digest]bool
	mem      *budget
	dir      string // the directory form's root; "" for the single-file form
	manifest *bundleManifest
}

func newBlobStore(mem *budget) *blobStore {
	return &blobStore{kept: map[events.Digest][]byte{}, verified: map[events.Digest]bool{}, mem: mem}
}

// listed returns the name of blob d, which the manifest must list.
func (s *blobStore) listed(d events.Digest) (string, fileEntry, error) {
	name := blobName(d)
	e, ok := s.manifest.file(name)
	if !ok {
		return name, e, wrapf(errMissing, "%s is not in the bundle", name)
	}
	return name, e, nil
}

// get returns the checked bytes of blob d.
func (s *blobStore) get(d events.Digest) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.kept[d]; ok {
		return b, nil
	}
	name, e, err := s.listed(d)
	if err != nil {
		return nil, err
	}
	if s.dir == "" {
		return nil, wrapf(errMissing, "%s was not read with the bundle's other blobs", name)
	}
	if err := s.mem.take(e.Size); err != nil {
		return nil, err
	}
	f, size, err := openDirFile(s.dir, name, maxBlob)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readExact(f, size)
	if err != nil {
		return nil, err
	}
	if err := checkBytes(e, b); err != nil {
		return nil, err
	}
	s.verified[d] = true
	s.kept[d] = b
	return b, nil
}

// check verifies blob d without keeping its bytes (directory form).
func (s *blobStore) check(d events.Digest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.verified[d] {
		return nil
	}
	name, e, err := s.listed(d)
	if err != nil {
		return err
	}
	if s.dir == "" {
		return wrapf(errMissing, "%s was not read with the bundle's other blobs", name)
	}
	f, size, err := openDirFile(s.dir, name, maxBlob)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkStream(e, f, size); err != nil {
		return err
	}
	s.verified[d] = true
	return nil
}

// checkBytes checks b against its manifest entry.
func checkBytes(e fileEntry, b []byte) error {
	if int64(len(b)) != e.Size {
		return wrapf(errDigest, "size %d, the manifest says %d", len(b), e.Size)
	}
	if d := events.Sum(b); d != e.Digest {
		return wrapf(errDigest, "digest %s, the manifest says %s", d, e.Digest)
	}
	return nil
}

// checkStream hashes size bytes from rd and checks them against their
// manifest entry (whose digest of a blob is its name: parseManifest).
func checkStream(e fileEntry, rd io.Reader, size int64) error {
	if size > maxBlob {
		return wrapf(errTooLarge, "%d bytes, at most %d", size, maxBlob)
	}
	if size != e.Size {
		return wrapf(errDigest, "size %d, the manifest says %d", size, e.Size)
	}
	h := blake3.New(32, nil)
	n, err := io.Copy(h, io.LimitReader(rd, size+1))
	if err != nil {
		return truncErr(err)
	}
	if n != size {
		return wrapf(errTruncated, "%d bytes read, %d expected", n, size)
	}
	if d := events.Digest(h.Sum(nil)); d != e.Digest {
		return wrapf(errDigest, "digest %s, the manifest says %s", d, e.Digest)
	}
	return nil
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
		return nil, wrapf(errDigest, "longer than the %d bytes it had when opened: it changed while being read", size)
	}
	return b, nil
}
