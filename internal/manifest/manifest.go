// Package manifest reads, checks and writes the manifest of a cassette
// directory (manifest.json): the cassettes it holds with their digests,
// and the hash-chained, append-only history of every change recording
// made. A manifest is untrusted input: it is read bounded and strictly
// (one JSON object, no unknown fields, no duplicate keys, nothing after
// it), every name in it must be a plain cassette file name, and its
// history chain must hold; every error about one wraps [ErrInvalid] and
// names its line. Package cassettes and cmd/refresh-cassettes use it; the
// format is specified in docs/FORMATS.md.
package manifest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
)

// Format is the manifest format version this package writes.
const Format = 1

// Name is the manifest's file name in its cassette directory.
const Name = "manifest.json"

// Manifest lists the cassettes of one directory with their digests, and
// the append-only history of every change recording made. Its format is
// specified in docs/FORMATS.md.
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
	// as the recording says: cassettes.Update.RecordedAt, or the responses' Date.
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

// Chain computes the chain value of h given the previous chain (hex, ""
// for the first entry).
func Chain(prev string, h HistoryEntry) (string, error) {
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

// Update upserts e and appends its history entry. A new entry is pinned;
// an existing entry keeps its pinned flag.
func (m *Manifest) Update(e Entry, forced bool, reason, at string) error {
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
	c, err := Chain(prev, h)
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
	if m.Format != Format {
		return fmt.Errorf("format %d, want %d", m.Format, Format)
	}
	if err := checkAges(m); err != nil {
		return err
	}
	for i, e := range m.Cassettes {
		if !IsCassetteName(e.File) {
			return entryErrf("cassettes", i, "cassette %q: not a cassette file name in the manifest's folder (a plain name ending in .yaml); no file is read for it", e.File)
		}
		if i > 0 && m.Cassettes[i-1].File >= e.File {
			return entryErrf("cassettes", i, "cassettes are not sorted by file, or %q is listed twice", e.File)
		}
		if err := new(events.Digest).UnmarshalText([]byte(e.Digest)); err != nil {
			return entryErrf("cassettes", i, "cassette %q: digest: %v", e.File, err)
		}
	}
	last := map[string]string{}
	prev := ""
	for i, h := range m.History {
		if !IsCassetteName(h.File) {
			return entryErrf("history", i, "history entry %d: %q is not a cassette file name (a plain name ending in .yaml)", i+1, h.File)
		}
		if h.Seq != i+1 {
			return entryErrf("history", i, "history entry %d has seq %d: history is append-only and dense", i+1, h.Seq)
		}
		c, err := Chain(prev, h)
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

// Encode is the manifest's file content: indented JSON with a final newline.
func (m *Manifest) Encode() ([]byte, error) {
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

// isPlainName reports whether name is a file name alone, on every
// platform: not empty, no path separator, drive or stream colon or NUL,
// not hidden (so never "." or ".."), and local on this platform (not a
// reserved Windows device name).
func isPlainName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "/\\:\x00") && !strings.HasPrefix(name, ".") &&
		filepath.IsLocal(name) && filepath.Base(name) == name
}

// IsCassetteName reports whether name is a plain file name ending in
// ".yaml": the only kind of name a cassette has in a manifest, a journal
// or a staging folder.
func IsCassetteName(name string) bool {
	return isPlainName(name) && strings.HasSuffix(name, ".yaml") && len(name) > len(".yaml")
}
