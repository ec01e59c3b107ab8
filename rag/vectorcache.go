package rag

import (
	"sync"

	"github.com/codegenie/codegenie/events"
)

// VectorCache keeps the example vectors of a store as an embedder produced
// them, keyed by (store digest, embedder digest), so that retrievals over
// the same store with the same embedder embed only their query. The two
// digests cover everything the vectors depend on (every example's text and
// the embedding model with its configuration), so a hit returns exactly
// what embedding again would for a deterministic embedder: the cache cannot
// change a retrieval's outcome. It is safe for concurrent use and may be
// shared by any number of retrievers and tiers; it holds at most Max
// entries and evicts the least recently used.
//
// Give it only a deterministic, local embedder (HashEmbedder): with a
// remote embedder served by a cassette, a hit skips a recorded request and
// the cassette reports it unused.
type VectorCache struct {
	max int

	mu      sync.Mutex
	entries map[vectorKey]*vectorEntry
	clock   uint64 // counts uses; orders entries by recency
}

type vectorKey struct{ store, model events.Digest }

type vectorEntry struct {
	vecs [][]float64 // in the store's example order; never modified
	used uint64
}

// DefaultVectorCacheEntries is the size of a VectorCache made with
// NewVectorCache(0).
const DefaultVectorCacheEntries = 16

// NewVectorCache returns an empty cache of at most max entries; max <= 0
// means DefaultVectorCacheEntries.
func NewVectorCache(max int) *VectorCache {
	if max <= 0 {
		max = DefaultVectorCacheEntries
	}
	return &VectorCache{max: max, entries: map[vectorKey]*vectorEntry{}}
}

// get returns the vectors stored for the key, or nil.
func (c *VectorCache) get(store, model events.Digest) [][]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[vectorKey{store, model}]
	if !ok {
		return nil
	}
	c.clock++
	e.used = c.clock
	return e.vecs
}

// put stores vecs under the key, evicting the least recently used entry
// when the cache is full. Callers must not modify vecs afterwards.
func (c *VectorCache) put(store, model events.Digest, vecs [][]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := vectorKey{store, model}
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.max {
		var oldest vectorKey
		first := true
		for key, e := range c.entries {
			if first || e.used < c.entries[oldest].used {
				oldest, first = key, false
			}
		}
		delete(c.entries, oldest)
	}
	c.clock++
	c.entries[k] = &vectorEntry{vecs: vecs, used: c.clock}
}

// Len returns the number of entries held.
func (c *VectorCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
