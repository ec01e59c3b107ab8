package rag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	excerptpkg "github.com/codegenie/codegenie/internal/excerpt"

	"github.com/codegenie/codegenie/events"
)

// Example is one solved example: the advisory it fixed, where, and how.
type Example struct {
	ID        string // unique within a store; orders ranking ties
	Advisory  string // advisory text of the solved example
	Ecosystem string // e.g. "npm", "Go", "PyPI"
	Package   string // the package the advisory is about
	Fix       string // the fix, as a unified diff
}

// ErrConflict reports an Add of an ID that is already in the store with
// different content. The store never merges or overwrites silently.
var ErrConflict = errors.New("conflicting example")

// ErrInvalidExample reports an example the store refuses (an empty ID).
var ErrInvalidExample = errors.New("invalid example")

// ConflictError names the ID that conflicts and the first field (in the
// order ID, Advisory, Ecosystem, Package, Fix) whose bytes differ. It
// unwraps to ErrConflict.
type ConflictError struct {
	ID    string
	Field string // "Advisory", "Ecosystem", "Package" or "Fix"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("rag: example %q: %v: already in the store with a different %s; give the new example its own ID or rebuild the store without the old one",
		e.ID, ErrConflict, e.Field)
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// StoreDigestVersion is the domain tag that opens the store digest encoding
// (see the package documentation). Changing the encoding changes it.
const StoreDigestVersion = "codegenie/rag/store/v1"

// Store is a set of solved examples keyed by ID. Its content, and therefore
// its Digest, does not depend on the order examples were added in. A Store
// is safe for concurrent use. The zero value is not usable; call NewStore.
type Store struct {
	mu      sync.RWMutex
	byID    map[string]Example
	sorted  []Example // byID sorted by ID; nil when stale; never mutated
	digest  events.Digest
	current bool // sorted and digest are up to date
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{byID: make(map[string]Example)}
}

// Add puts ex in the store. Adding an example identical to one already
// stored is a no-op. Adding a different example under an ID already in the
// store returns a *ConflictError (errors.Is(err, ErrConflict)) and leaves the
// store unchanged. An empty ID is ErrInvalidExample.
func (s *Store) Add(ex Example) error {
	if strings.TrimSpace(ex.ID) == "" {
		return fmt.Errorf("rag: example with advisory %q: %w: the ID is empty; give every solved example a unique ID",
			excerpt(ex.Advisory, 60), ErrInvalidExample)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byID[ex.ID]; ok {
		if f := firstDiff(old, ex); f != "" {
			return &ConflictError{ID: ex.ID, Field: f}
		}
		return nil
	}
	s.byID[ex.ID] = ex
	s.current = false
	s.sorted = nil
	return nil
}

func firstDiff(a, b Example) string {
	switch {
	case a.Advisory != b.Advisory:
		return "Advisory"
	case a.Ecosystem != b.Ecosystem:
		return "Ecosystem"
	case a.Package != b.Package:
		return "Package"
	case a.Fix != b.Fix:
		return "Fix"
	}
	return ""
}

// Examples returns a copy of the stored examples sorted by ID (byte order).
func (s *Store) Examples() []Example {
	exs, _ := s.snapshot()
	return slices.Clone(exs)
}

// snapshot returns the examples sorted by ID and the digest of exactly that
// set. The slice is shared: callers must not modify it.
func (s *Store) snapshot() ([]Example, events.Digest) {
	s.mu.RLock()
	if s.current {
		exs, d := s.sorted, s.digest
		s.mu.RUnlock()
		return exs, d
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.current {
		exs := make([]Example, 0, len(s.byID))
		for _, ex := range s.byID {
			exs = append(exs, ex)
		}
		slices.SortFunc(exs, func(a, b Example) int { return strings.Compare(a.ID, b.ID) })
		s.sorted = exs
		s.digest = events.Sum(appendStoreEncoding(nil, exs))
		s.current = true
	}
	return s.sorted, s.digest
}

// Len returns the number of examples in the store.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byID)
}

// Digest returns the store_digest: blake3-256 over the encoding specified in
// the package documentation. It depends only on the set of examples, never
// on the order they were added in.
func (s *Store) Digest() events.Digest {
	_, d := s.snapshot()
	return d
}

// appendStoreEncoding appends the store encoding of examples (already sorted
// by ID) to dst; the package documentation specifies the format.
func appendStoreEncoding(dst []byte, examples []Example) []byte {
	dst = appendLenBytes(dst, StoreDigestVersion)
	dst = binary.AppendUvarint(dst, uint64(len(examples)))
	for _, ex := range examples {
		dst = appendLenBytes(dst, ex.ID)
		dst = appendLenBytes(dst, ex.Advisory)
		dst = appendLenBytes(dst, ex.Ecosystem)
		dst = appendLenBytes(dst, ex.Package)
		dst = appendLenBytes(dst, ex.Fix)
	}
	return dst
}

func appendLenBytes(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// excerpt returns at most n bytes of s, cut at a rune boundary, with "..."
// appended when it was cut.
func excerpt(s string, n int) string {
	if h := excerptpkg.Head(s, n); len(h) < len(s) {
		return h + "..."
	}
	return s
}
