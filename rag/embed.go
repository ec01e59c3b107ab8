package rag

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/codegenie/codegenie/events"
)

// Embedder turns texts into vectors. Implementations must be deterministic:
// the same texts give the same vectors, bit for bit, on every platform (a
// remote model is made deterministic by replaying its answers from a
// cassette).
type Embedder interface {
	// Embed returns one vector per text, in the order of texts, each of
	// length Dimensions().
	Embed(ctx context.Context, texts []string) ([][]float64, error)
	// Digest is the embedding_model_digest: it covers every parameter that
	// can change a vector, and a version of the algorithm or wire format.
	Digest() events.Digest
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
}

// ErrBadConfig reports an embedder or retriever configuration that cannot
// work: a parameter out of range or a required field missing.
var ErrBadConfig = errors.New("bad configuration")

// HashEmbedderVersion names the HashEmbedder algorithm and goes into its
// Digest. Any change to tokenisation, features, hashing or normalisation
// must change it.
const HashEmbedderVersion = "codegenie/rag/hash-embedder/v1"

// Defaults and bounds of HashEmbedderConfig.
const (
	DefaultDimensions = 256
	MaxDimensions     = 1 << 16
	DefaultNGram      = 3
	MaxNGram          = 8
)

// HashEmbedderConfig configures a HashEmbedder. The zero value is usable and
// means the defaults.
type HashEmbedderConfig struct {
	// Dimensions is the vector length, 1..MaxDimensions. 0 means
	// DefaultDimensions.
	Dimensions int
	// NGram is the length in runes of the character n-grams taken from each
	// word token (padded with '<' and '>'), 1..MaxNGram. 0 means
	// DefaultNGram.
	NGram int
	// Seed is mixed into every feature hash; different seeds give unrelated
	// embeddings of the same text. 0 is a valid seed.
	Seed uint64
}

// withDefaults returns c with zero fields replaced by the defaults.
func (c HashEmbedderConfig) withDefaults() HashEmbedderConfig {
	if c.Dimensions == 0 {
		c.Dimensions = DefaultDimensions
	}
	if c.NGram == 0 {
		c.NGram = DefaultNGram
	}
	return c
}

// Validate reports whether c (after defaults) is in range; the error wraps
// ErrBadConfig.
func (c HashEmbedderConfig) Validate() error {
	d := c.withDefaults()
	if d.Dimensions < 1 || d.Dimensions > MaxDimensions {
		return fmt.Errorf("rag: hash embedder: Dimensions = %d: %w: use 1..%d, or 0 for %d",
			c.Dimensions, ErrBadConfig, MaxDimensions, DefaultDimensions)
	}
	if d.NGram < 1 || d.NGram > MaxNGram {
		return fmt.Errorf("rag: hash embedder: NGram = %d: %w: use 1..%d, or 0 for %d",
			c.NGram, ErrBadConfig, MaxNGram, DefaultNGram)
	}
	return nil
}

// HashEmbedder is the deterministic offline embedder: signed feature hashing
// over lowercase word tokens and character n-grams into a fixed number of
// dimensions, L2-normalised. The package documentation specifies the
// algorithm exactly. It is safe for concurrent use.
type HashEmbedder struct {
	cfg    HashEmbedderConfig // defaults applied
	digest events.Digest
}

// NewHashEmbedder returns a HashEmbedder for cfg, or an error wrapping
// ErrBadConfig when cfg is out of range.
func NewHashEmbedder(cfg HashEmbedderConfig) (*HashEmbedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg.withDefaults()
	payload, err := events.Canonical(struct {
		Kind       string `json:"kind"`
		Version    string `json:"version"`
		Dimensions int    `json:"dimensions"`
		NGram      int    `json:"ngram"`
		Seed       string `json:"seed"` // decimal string: exact beyond 2^53
	}{"hash", HashEmbedderVersion, c.Dimensions, c.NGram, fmt.Sprint(c.Seed)})
	if err != nil {
		return nil, fmt.Errorf("rag: hash embedder digest: %w", err)
	}
	return &HashEmbedder{cfg: c, digest: events.Sum(payload)}, nil
}

// Config returns the configuration in use, defaults applied.
func (h *HashEmbedder) Config() HashEmbedderConfig { return h.cfg }

// Dimensions returns the vector length.
func (h *HashEmbedder) Dimensions() int { return h.cfg.Dimensions }

// Digest returns the embedding_model_digest: blake3-256 of the canonical
// JSON {"dimensions":D,"kind":"hash","ngram":N,"seed":"S","version":V}.
func (h *HashEmbedder) Digest() events.Digest { return h.digest }

// Embed returns the embedding of each text. A text with no word tokens (or
// whose signed features cancel exactly) embeds to the zero vector. It
// fails only when ctx is done.
func (h *HashEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("rag: hash embedder: text %d of %d: %w", i, len(texts), err)
		}
		out[i] = h.embed(t)
	}
	return out, nil
}

// embed computes one vector; see the package documentation.
func (h *HashEmbedder) embed(text string) []float64 {
	v := make([]float64, h.cfg.Dimensions)
	var seed [8]byte
	binary.LittleEndian.PutUint64(seed[:], h.cfg.Seed)
	base := fnvAdd(fnvOffset, seed[:])

	tok := make([]rune, 0, 32)
	win := make([]rune, 0, 64)
	buf := make([]byte, 0, 64)
	flush := func() {
		if len(tok) == 0 {
			return
		}
		// Word feature.
		buf = append(buf[:0], 'w')
		for _, r := range tok {
			buf = utf8.AppendRune(buf, r)
		}
		h.add(v, fnvAdd(base, buf))
		// Character n-grams of "<" + token + ">".
		win = append(win[:0], '<')
		win = append(win, tok...)
		win = append(win, '>')
		n := h.cfg.NGram
		if len(win) <= n {
			h.add(v, fnvAdd(base, appendRunes(append(buf[:0], 'c'), win)))
		} else {
			for i := 0; i+n <= len(win); i++ {
				h.add(v, fnvAdd(base, appendRunes(append(buf[:0], 'c'), win[i:i+n])))
			}
		}
		tok = tok[:0]
	}
	for _, r := range text { // invalid UTF-8 decodes to U+FFFD, per the spec
		switch {
		case 'A' <= r && r <= 'Z':
			tok = append(tok, r+('a'-'A'))
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r >= utf8.RuneSelf:
			tok = append(tok, r)
		default:
			flush()
		}
	}
	flush()

	// Every component is an integer count (exact in float64), so the sum of
	// squares is exact; Sqrt and division are correctly rounded in IEEE 754.
	var sq float64
	for i := range v {
		sq += float64(v[i] * v[i])
	}
	if sq == 0 {
		return v
	}
	norm := math.Sqrt(sq)
	for i := range v {
		v[i] = v[i] / norm
	}
	return v
}

// add adds the signed feature with hash x to v.
func (h *HashEmbedder) add(v []float64, x uint64) {
	m := mix64(x)
	i := m % uint64(len(v))
	if m>>63 == 1 {
		v[i]--
	} else {
		v[i]++
	}
}

func appendRunes(dst []byte, rs []rune) []byte {
	for _, r := range rs {
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvAdd continues a 64-bit FNV-1a hash h over b.
func fnvAdd(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// mix64 is the SplitMix64 finaliser: it spreads FNV's weak low bits over the
// whole word before the bucket and sign are taken.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
