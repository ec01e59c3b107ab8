package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/codegenie/codegenie/events"
)

var (
	// ErrInvalid: the manifest is malformed or its history chain is
	// broken.
	ErrInvalid = errors.New("invalid manifest")

	// ErrPinned: a pinned cassette may only be re-recorded with force and
	// a reason.
	ErrPinned = errors.New("cassette is pinned")
)

// Error locates a failure to read a manifest: the file, and the 1-based
// line when one is known (0 otherwise). It reads as package cassettes'
// errors about a manifest do.
type Error struct {
	Path string
	Line int
	Err  error
}

func (e *Error) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return fmt.Sprintf("cassettes: %s: manifest: %v", loc, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Read reads and checks the manifest at path. A missing file is an error
// wrapping fs.ErrNotExist. The file must hold exactly one JSON object of
// the manifest format: unknown fields, duplicate keys and anything after
// the object are errors naming the line. Every error is an *Error. The
// caller owns the result.
func Read(path string) (*Manifest, error) {
	m, err := Shared(path)
	if err != nil {
		return nil, err
	}
	return m.Clone(), nil
}

// Clone returns a copy of m that shares nothing with it.
func (m *Manifest) Clone() *Manifest {
	c := *m
	c.Cassettes, c.History = slices.Clone(m.Cassettes), slices.Clone(m.History)
	return &c
}

// cache holds checked manifests by the blake3 of their bytes, so a
// manifest is parsed and its history chain verified once per content, and
// any change to the file is still seen. Cached manifests are never
// modified.
var cache struct {
	sync.Mutex
	m map[events.Digest]*Manifest
}

// maxCached bounds cache; past it the cache starts over.
const maxCached = 64

// Shared is Read without the copy: the result is shared and must not be
// modified.
func Shared(path string) (*Manifest, error) {
	raw, err := readBounded(path, maxManifestBytes)
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	sum := events.Sum(raw)
	cache.Lock()
	m, ok := cache.m[sum]
	cache.Unlock()
	if ok {
		return m, nil
	}
	m, err = Parse(path, raw)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	if cache.m == nil || len(cache.m) >= maxCached {
		cache.m = map[events.Digest]*Manifest{}
	}
	cache.m[sum] = m
	cache.Unlock()
	return m, nil
}

// ResetCache forgets every manifest read (for benchmarks of a cold read).
func ResetCache() {
	cache.Lock()
	cache.m = nil
	cache.Unlock()
}

// Parse checks raw, the content of the manifest at path, and returns it.
// Every error is an *Error wrapping ErrInvalid.
func Parse(path string, raw []byte) (*Manifest, error) {
	invalid := func(line int, err error) error {
		return &Error{Path: path, Line: line, Err: fmt.Errorf(
			"%w: %v; restore it from version control (only recording writes it)", ErrInvalid, err)}
	}
	lines, line, err := strictJSON(raw)
	if err != nil {
		return nil, invalid(line, err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		line := 0
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			line = lineOfOffset(raw, int(te.Offset))
		}
		return nil, invalid(line, err)
	}
	if err := m.check(); err != nil {
		line := 0
		var ee *entryError
		if errors.As(err, &ee) && ee.index < len(lines[ee.field]) {
			line = lines[ee.field][ee.index]
		}
		return nil, invalid(line, err)
	}
	return &m, nil
}

// readBounded reads path, refusing a file larger than limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes, the most this package reads", limit)
	}
	return b, nil
}
