package events

import "github.com/codegenie/codegenie/internal/eventrec"

// Chain returns the chain digest of evs exactly as given.
func Chain(evs []Event) Digest {
	var c chainer
	for _, e := range evs {
		c.add(e)
	}
	return c.c.Head()
}

// ChainDigest returns the chain digest of evs with the nondeterministic
// fields stripped: one digest per run.
func ChainDigest(evs []Event) Digest { return ChainStripped(evs, Nondeterministic) }

// ChainStripped returns the chain digest of evs with the fields in fs
// stripped from each event.
func ChainStripped(evs []Event, fs Field) Digest {
	var c chainer
	for _, e := range evs {
		c.add(e.Strip(fs))
	}
	return c.c.Head()
}

// chainer folds events into an eventrec.Chainer through their header
// records.
type chainer struct {
	c   eventrec.Chainer
	buf []byte
}

func (c *chainer) add(e Event) {
	f := eventrec.Fields{
		Seq: e.Seq, Parent: e.Parent, Kind: string(e.Kind), Lane: e.Lane,
		PayloadDigest: e.PayloadDigest, EmittedAt: e.EmittedAt, AuditEventID: e.AuditEventID,
	}
	c.buf = eventrec.AppendHeader(c.buf[:0], &f)
	c.c.AddRecord(c.buf)
}
