package cassettes

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
)

func isSSE(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// sseData returns the concatenated data fields of one frame.
func sseData(frame string) string {
	var out []string
	for line := range strings.Lines(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(frame)) {
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data:"); ok {
			out = append(out, strings.TrimPrefix(d, " "))
		}
	}
	return strings.Join(out, "\n")
}

// replayBody is a replayed response body. For a stream each Read returns
// at most one frame (see framing), so streaming consumers see the frames
// arrive one by one, as they would from a server. Reads fail once the
// request's context is done; a body abandoned that way before its end
// calls onCancel (once), which lets a retry be served the interaction
// again.
type replayBody struct {
	ctx      context.Context
	framing  framing
	onCancel func()
	pace     *pacer // nil: every frame at once

	mu        sync.Mutex
	data      string
	off       int
	end       int // of the frame off is in
	closed    bool
	cancelled bool
}

func newReplayBody(ctx context.Context, data string, f framing) *replayBody {
	return &replayBody{ctx: ctx, data: data, framing: f}
}

func (b *replayBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if err := b.ctx.Err(); err != nil {
		b.cancel()
		return 0, err
	}
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	if err := b.waitFrame(); err != nil {
		return 0, err
	}
	if b.off == b.end {
		b.end = b.framing.end(b.data, b.off)
	}
	n := copy(p, b.data[b.off:b.end])
	b.off += n
	b.pace.delivered(b.off, b.end)
	return n, nil
}

// cancel gives the interaction back if the body was not read to its end.
func (b *replayBody) cancel() {
	if !b.cancelled && b.off < len(b.data) && b.onCancel != nil {
		b.cancelled = true
		b.onCancel()
	}
}

func (b *replayBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx.Err() != nil {
		b.cancel()
	}
	if !b.closed {
		b.pace.stop()
	}
	b.closed = true
	return nil
}
