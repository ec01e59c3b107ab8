package cassettes

import (
	"io"
	"time"

	"github.com/codegenie/codegenie/internal/chunking"
)

// chunked returns the body a response is served with: b itself when the
// plan leaves the cuts as recorded, else b cut into the plan's Reads.
// body is the interaction's index in the cassette.
func chunked(b *replayBody, p chunking.Plan, body int) io.ReadCloser {
	c := p.Cutter(body)
	if c == nil {
		return b
	}
	return &chunkedBody{replayBody: b, cut: c}
}

// chunkedBody delivers a replayed body in the Read boundaries of a
// chunking plan: the same bytes in the same order, each frame of an event
// stream no earlier than its recorded offset (the replay body's own
// pacing), and a joined Read only takes frames that are already due.
type chunkedBody struct {
	*replayBody
	cut *chunking.Cutter
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.replayBody.Read(p)
	}
	step := c.cut.Next()
	limit := min(len(p), step.Max)
	n, err := c.replayBody.Read(p[:limit])
	for step.Join && err == nil && n < limit && c.due() {
		var m int
		m, err = c.replayBody.Read(p[n:limit])
		n += m
	}
	if n > 0 {
		// The error, io.EOF included, comes again on the next Read.
		return n, nil
	}
	return n, err
}

// due reports whether a Read of b would return at once: bytes are left
// and the frame it begins, if paced, has reached its offset.
func (b *replayBody) due() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.off >= len(b.data) || b.ctx.Err() != nil {
		return false
	}
	p := b.pace
	//detvet:ignore replay paces frames on the clock it runs on (a synctest bubble's under TimingAuto); this decides only where a Read ends, never the bytes or their order
	return p == nil || !p.atStart || p.frame >= len(p.offsets) || !time.Now().Before(p.start.Add(p.offsets[p.frame]))
}
