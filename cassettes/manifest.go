package cassettes

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/codegenie/codegenie/events"
)

// ManifestFormat is the manifest format version this package writes.
const ManifestFormat = 1

// Manifest lists the cassettes of one directory with their digests, and
// the append-only history of every change recording made. Its
// format is specified in the package documentation.
type Manifest struct {
	Format int `json:"format"`
	// MaxAge and HardMaxAge are the directory's age limits (parseAge
	// syntax; "" for none), for entries that set none of their own.
	MaxAge     string         `json:"max_age,omitempty"`
	HardMaxAge string         `json:"hard_max_age,omitempty"`
	Cassettes  []Entry        `json:"cassettes"`
	History    []HistoryEntry `json:"history"`
}

// Entry is one cassette in the manifest.
type Entry struct {
	// File is the cassette's file name in the manifest's directory: a
	// plain name ending in ".yaml" (a name with a path separator, or one
	// that starts with a dot, makes the manifest invalid).
	File string `json:"file"`
	// Digest is the cassette_id.
	Digest string `json:"digest"`
	// Interactions is the number of recorded interactions.
	Interactions int `json:"interactions"`
	// Model is the model named by the first response that names one.
	Model string `json:"model,omitempty"`
	// Pinned marks a cassette a golden digest depends on: re-recording
	// it needs force and a reason.
	Pinned bool `json:"pinned"`
	// RecordedAt is when it was last recorded (RFC 3339, UTC; "" unknown),
	// as the recording says: Update.RecordedAt, or the responses' Date.
	RecordedAt string `json:"recorded_at,omitempty"`
	// MaxAge and HardMaxAge override the directory's age limits.
	MaxAge     string `json:"max_age,omitempty"`
	HardMaxAge string `json:"hard_max_age,omitempty"`
}

// HistoryEntry records one change to one cassette. Entries are only ever
// appended; Chain links each to all before it.
type HistoryEntry struct {
	Seq          int    `json:"seq"`
	File         string `json:"file"`
	OldDigest    string `json:"old_digest,omitempty"`
	NewDigest    string `json:"new_digest"`
	Interactions int    `json:"interactions"`
	Forced       bool   `json:"forced,omitempty"`
	Reason       string `json:"reason,omitempty"`
	At           string `json:"at,omitempty"`
	Chain        string `json:"chain"`
}

// chainOf computes the chain value of h given the previous chain (hex, ""
// for the first entry).
func chainOf(prev string, h HistoryEntry) (string, error) {
	h.Chain = ""
	b, err := events.Canonical(h)
	if err != nil {
		return "", err
	}
	p := make([]byte, 32)
	if prev != "" {
		if p, err = hex.DecodeString(prev); err != nil || len(p) != 32 {
			return "", fmt.Errorf("previous chain %q is not a 32-byte hex digest", prev)
		}
	}
	return events.Sum(append(p, b...)).String(), nil
}

// Lookup returns the entry for file (a file name in the manifest's
// directory).
func (m *Manifest) Lookup(file string) (Entry, bool) {
	i := slices.IndexFunc(m.Cassettes, func(e Entry) bool { return e.File == file })
	if i < 0 {
		return Entry{}, false
	}
	return m.Cassettes[i], true
}

// update upserts e and appends its history entry. A new entry is pinned;
// an existing entry keeps its pinned flag.
func (m *Manifest) update(e Entry, forced bool, reason, at string) error {
	old, found := m.Lookup(e.File)
	if found {
		e.Pinned, e.MaxAge, e.HardMaxAge = old.Pinned, old.MaxAge, old.HardMaxAge
		if e.RecordedAt == "" {
			e.RecordedAt = old.RecordedAt
		}
		if old.Digest == e.Digest {
			// Recorded again with the same content: fresh, no history.
			m.Cassettes[slices.IndexFunc(m.Cassettes, func(x Entry) bool { return x.File == e.File })] = e
			return nil
		}
	} else {
		e.Pinned = true
	}
	h := HistoryEntry{
		Seq: len(m.History) + 1, File: e.File, OldDigest: old.Digest, NewDigest: e.Digest,
		Interactions: e.Interactions, Forced: forced, Reason: reason, At: at,
	}
	prev := ""
	if n := len(m.History); n > 0 {
		prev = m.History[n-1].Chain
	}
	c, err := chainOf(prev, h)
	if err != nil {
		return err
	}
	h.Chain = c
	m.History = append(m.History, h)
	if i := slices.IndexFunc(m.Cassettes, func(x Entry) bool { return x.File == e.File }); i >= 0 {
		m.Cassettes[i] = e
	} else {
		m.Cassettes = append(m.Cassettes, e)
		slices.SortFunc(m.Cassettes, func(a, b Entry) int { return strings.Compare(a.File, b.File) })
	}
	return nil
}

// entryError is a check failure in one element of "cassettes" or
// "history" (index from 0), so that the reader can name its line.
type entryError struct {
	field string
	index int
	err   error
}

func (e *entryError) Error() string { return e.err.Error() }

func entryErrf(field string, index int, format string, args ...any) error {
	return &entryError{field: field, index: index, err: fmt.Errorf(format, args...)}
}

// check validates the manifest's structure and history chain.
func (m *Manifest) check() error {
	if m.Format != ManifestFormat {
		return fmt.Errorf("format %d, want %d", m.Format, ManifestFormat)
	}
	if err := checkAges(m); err != nil {
		return err
	}
	for i, e := range m.Cassettes {
		if !isCassetteName(e.File) {
			return entryErrf("cassettes", i, "cassette %q: not a cassette file name in the manifest's folder (a plain name ending in .yaml); no file is read for it", e.File)
		}
		if i > 0 && m.Cassettes[i-1].File >= e.File {
			return entryErrf("cassettes", i, "cassettes are not sorted by file, or %q is listed twice", e.File)
		}
		if _, err := events.ParseDigest(e.Digest); err != nil {
			return entryErrf("cassettes", i, "cassette %q: digest: %v", e.File, err)
		}
	}
	last := map[string]string{}
	prev := ""
	for i, h := range m.History {
		if !isCassetteName(h.File) {
			return entryErrf("history", i, "history entry %d: %q is not a cassette file name (a plain name ending in .yaml)", i+1, h.File)
		}
		if h.Seq != i+1 {
			return entryErrf("history", i, "history entry %d has seq %d: history is append-only and dense", i+1, h.Seq)
		}
		c, err := chainOf(prev, h)
		if err != nil {
			return entryErrf("history", i, "history entry %d: %v", h.Seq, err)
		}
		if c != h.Chain {
			return entryErrf("history", i, "history entry %d: chain %s, computed %s: the history was edited", h.Seq, h.Chain, c)
		}
		if h.OldDigest != last[h.File] {
			return entryErrf("history", i, "history entry %d: old digest %s of %q, previous entry says %s", h.Seq, h.OldDigest, h.File, last[h.File])
		}
		last[h.File] = h.NewDigest
		prev = h.Chain
	}
	for i, e := range m.Cassettes {
		if last[e.File] != e.Digest {
			return entryErrf("cassettes", i, "cassette %q: digest %s is not the last one its history records (%s)", e.File, e.Digest, last[e.File])
		}
	}
	return nil
}

// encode is the manifest's file content: indented JSON with a final newline.
func (m *Manifest) encode() ([]byte, error) {
	if m.Cassettes == nil {
		m.Cassettes = []Entry{}
	}
	if m.History == nil {
		m.History = []HistoryEntry{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadManifest reads and checks the manifest at path. A missing file is an
// error wrapping fs.ErrNotExist. The file must hold exactly one JSON object
// of the manifest format: unknown fields, duplicate keys and anything after
// the object are errors naming the line. The caller owns the result.
func ReadManifest(path string) (*Manifest, error) {
	m, err := readManifest(path)
	if err != nil {
		return nil, err
	}
	return m.clone(), nil
}

func (m *Manifest) clone() *Manifest {
	c := *m
	c.Cassettes, c.History = slices.Clone(m.Cassettes), slices.Clone(m.History)
	return &c
}

// manifestCache holds checked manifests by the blake3 of their bytes, so a
// manifest is parsed and its history chain verified once per content, and
// any change to the file is still seen. Cached manifests are never
// modified.
var manifestCache struct {
	sync.Mutex
	m map[events.Digest]*Manifest
}

// maxCachedManifests bounds manifestCache; past it the cache starts over.
const maxCachedManifests = 64

// readManifest is ReadManifest without the copy: the result is shared and
// must not be modified.
func readManifest(path string) (*Manifest, error) {
	raw, err := readBounded(path, maxManifestBytes)
	if err != nil {
		return nil, newErr(path, 0, "manifest", err)
	}
	sum := events.Sum(raw)
	manifestCache.Lock()
	m, ok := manifestCache.m[sum]
	manifestCache.Unlock()
	if ok {
		return m, nil
	}
	m, err = parseManifest(path, raw)
	if err != nil {
		return nil, err
	}
	manifestCache.Lock()
	if manifestCache.m == nil || len(manifestCache.m) >= maxCachedManifests {
		manifestCache.m = map[events.Digest]*Manifest{}
	}
	manifestCache.m[sum] = m
	manifestCache.Unlock()
	return m, nil
}

func parseManifest(path string, raw []byte) (*Manifest, error) {
	invalid := func(line int, err error) error {
		return newErr(path, line, "manifest", detailf(ErrInvalidManifest,
			"%v: %v; restore it from version control (only recording writes it)", ErrInvalidManifest, err))
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

// verifyManifest checks the opened cassette against its manifest entry.
// It reports whether a manifest vouched for the cassette.
func (c *Cassette) verifyManifest(p *parsed) (bool, error) {
	mpath := c.opts.Manifest
	if err := interrupted(filepath.Dir(c.path)); err != nil {
		return false, err
	}
	if mpath == "" {
		mpath = filepath.Join(filepath.Dir(c.path), ManifestName)
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

func verifyEntry(m *Manifest, rel, path string, p *parsed, refresh string) error {
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
// to opts.Warn. It returns all problems joined, each a [*CassetteError],
// or nil. The zero [VerifyOptions] judges ages at time.Now.
func Verify(dir string, opts VerifyOptions) error { return verify(dir, opts) }

func verify(dir string, opts VerifyOptions) error {
	if err := interrupted(dir); err != nil {
		return err
	}
	mpath := filepath.Join(dir, ManifestName)
	m, err := readManifest(mpath)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range m.Cassettes {
		path := filepath.Join(dir, filepath.FromSlash(e.File))
		refresh := rerecordHint(path, Options{})
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
	errs = append(errs, freshness(dir, m, opts)...)
	return errors.Join(errs...)
}
