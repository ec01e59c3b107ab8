package eventrec

import "lukechampine.com/blake3"

// Chainer computes the chain digest incrementally. The zero value is ready
// to use and starts from h0.
type Chainer struct {
	h      [32]byte
	hasher *blake3.Hasher
}

// AddRecord folds a header record (AppendHeader) into the chain and
// returns the new head.
func (c *Chainer) AddRecord(header []byte) [32]byte {
	if c.hasher == nil {
		c.hasher = blake3.New(32, nil)
	} else {
		c.hasher.Reset()
	}
	c.hasher.Write(c.h[:])
	c.hasher.Write(header)
	c.hasher.Sum(c.h[:0])
	return c.h
}

// Head returns the current chain head (h0 before any AddRecord).
func (c *Chainer) Head() [32]byte { return c.h }
