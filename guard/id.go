package guard

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"

	"github.com/codegenie/codegenie/events"
)

const idLabel = "codegenie/guard/id/v1"

// deterministicID returns the ID number seq of the run keyed by runKey, in
// the format specified in the package documentation.
func deterministicID(runKey string, seq uint64) string {
	b := make([]byte, 0, len(idLabel)+len(runKey)+10)
	b = append(b, idLabel...)
	b = append(b, 0)
	b = append(b, runKey...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, seq)
	d := events.Sum(b)
	return formatUUID(d[:16], 8)
}

func formatUUID(u []byte, version byte) string {
	var v [16]byte
	copy(v[:], u)
	v[6] = v[6]&0x0f | version<<4
	v[8] = v[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], v[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], v[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], v[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], v[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], v[10:16])
	return string(s[:])
}

// IDSource returns an ID source that yields the IDs number 1, 2, ... of
// the run keyed by runKey, in the format specified in the package
// documentation: two sources for one runKey yield the same IDs in the same
// order. Its type matches events.Config.NewID.
// It is safe for concurrent use, but concurrent callers get the sequence
// numbers in the order they happen to call; give each lane its own source
// (for example IDSource(runKey + "/" + lane)) when order matters.
func IDSource(runKey string) func() string {
	var (
		mu sync.Mutex
		n  uint64
	)
	return func() string {
		mu.Lock()
		n++
		seq := n
		mu.Unlock()
		return deterministicID(runKey, seq)
	}
}

// RandomIDSource returns a source of random version 4 UUIDs (from
// crypto/rand, which never fails) outside replay mode. In replay mode it
// returns a *ReplayModeError with Op OpRandomID.
func RandomIDSource(ctx context.Context) (func() string, error) {
	if err := check(ctx, OpRandomID, "a random ID source was requested"); err != nil {
		return nil, err
	}
	return func() string {
		var b [16]byte
		_, _ = rand.Read(b[:]) // documented never to return an error
		return formatUUID(b[:], 4)
	}, nil
}
