package events

import "github.com/codegenie/codegenie/internal/eventrec"

// Chain returns the chain digest of evs with the fields in strip zeroed in
// each event: Chain(evs, Nondeterministic) is the one digest of a run, and
// Chain(evs, 0) the digest of the tape exactly as given.
func Chain(evs []Event, strip Field) Digest {
	var c chainer
	for _, e := range evs {
		c.add(e.Strip(strip))
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
