// Package rag is the retrieval step of the fallback pipeline: a store of
// solved examples with an order-independent digest, embedders with a digest
// of their parameters, a retriever whose ranking is stable on every
// platform, and the pure two-threshold band classifier.
//
// It is not a vector database and not a general search library: it holds a
// few thousand examples in memory and scores every one of them for each
// query. It emits no events; the fallback package records what it returns.
//
// Two of the four values that pin a run come from here: Store.Digest is the
// store_digest and Embedder.Digest the embedding_model_digest.
//
// # Store digest
//
// Store.Digest is blake3-256 over the byte string
//
//	store    = str("codegenie/rag/store/v1") uvarint(n) example*n
//	example  = str(ID) str(Advisory) str(Ecosystem) str(Package) str(Fix)
//	str(s)   = uvarint(len(s)) s
//
// with the examples sorted by ID in byte order and uvarint the unsigned
// LEB128 varint of encoding/binary. The bytes of every field are taken as
// they are (no normalisation). IDs are unique within a store, so the sorted
// order, and with it the digest, does not depend on insertion order; adding
// an identical example again changes nothing, and the same ID with other
// bytes is refused with ErrConflict, never merged.
//
// # Hash embedder
//
// HashEmbedder needs no model and no network. For a text:
//
//  1. Decode it as UTF-8 (an invalid byte becomes U+FFFD, as a Go range
//     loop decodes it). A token is a maximal run of runes that are ASCII
//     letters, ASCII digits or any rune >= U+0080. ASCII letters are
//     lowercased; nothing else is case-folded, so the result does not
//     depend on the Unicode tables of the Go release.
//  2. Each token t gives the features "w"+t and, over the runes of
//     "<"+t+">", every window of NGram runes prefixed with "c" (the whole
//     padded token once when it is not longer than NGram). Features are
//     counted with repetition.
//  3. A feature f is hashed as x = SplitMix64(FNV-1a-64(le64(Seed) || f)),
//     with f in UTF-8 and SplitMix64 the finaliser
//     x ^= x>>30; x *= 0xbf58476d1ce4e5b9; x ^= x>>27;
//     x *= 0x94d049bb133111eb; x ^= x>>31.
//     It adds -1 to component x mod Dimensions when the top bit of x is 1,
//     else +1.
//  4. The vector is divided by its L2 norm. The components before that are
//     integers, so the sum of squares is exact, and square root and
//     division are correctly rounded in IEEE 754: the vector is bit-identical
//     on every platform. A text without tokens, or whose signed features
//     cancel exactly, gives the zero vector.
//
// Its Digest is blake3-256 of the canonical JSON (events.Canonical) of
// {"dimensions":D,"kind":"hash","ngram":N,"seed":"S","version":V} with the
// defaults applied, S the seed in decimal and V = HashEmbedderVersion.
//
// # OpenAI-compatible embedder
//
// OpenAIEmbedder posts {"model","input","encoding_format":"float"} (and
// "dimensions" when Dims > 0) to {BaseURL}/v1/embeddings through the
// injected *http.Client and reads data[].index / data[].embedding. Its
// Digest is blake3-256 of the canonical JSON
// {"dimensions":D,"kind":"openai","model":M,"version":V}; the base URL and
// the API key are left out on purpose, so a cassette replay through another
// host pins to the same digest (the cassette_id pins the answers).
//
// # Retrieval
//
// A Retriever embeds the query (one Embed call), then ExampleText of every
// example (in ID order, in a second Embed call, skipped when the opt-in
// example cache holds vectors for the same store_digest and
// embedding_model_digest), scores each example with Cosine — sums taken in
// index order, each product converted to float64 so no multiply-add is
// fused — and returns the K best by descending score, ties broken by
// ascending ID. The result depends only on the query, the set of examples
// and the embedder, never on insertion order or scheduling.
//
// # Bands
//
// Classify maps a score to Reject, Borderline or Accept with two inclusive
// lower bounds, Thresholds{Low, High}, 0 <= Low <= High <= 1. It is pure:
// the band does not depend on anything but its two arguments, so a float
// that differs in the last place across platforms can only move a score
// across a boundary, never change the rule.
package rag
