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

// replayBody is a replayed response body. For server-sent events each Read
// returns at most one frame (up to and including the blank line that ends
// it), so streaming consumers see the events arrive one by one, as they
// would from a server. Reads fail once the request's context is done.
type replayBody struct {
	ctx context.Context
	sse bool

	mu     sync.Mutex
	data   string
	off    int
	closed bool
}

func newReplayBody(ctx context.Context, data string, sse bool) io.ReadCloser {
	return &replayBody{ctx: ctx, data: data, sse: sse}
}

// frameEnd returns the end of the SSE frame starting at off: just past the
// first "\n\n", "\r\r" or "\r\n\r\n", found in one forward scan, or len(s).
func frameEnd(s string, off int) int {
	for i := off; i+1 < len(s); i++ {
		switch {
		case s[i] == '\n' && s[i+1] == '\n', s[i] == '\r' && s[i+1] == '\r':
			return i + 2
		case s[i] == '\r' && s[i+1] == '\n' && strings.HasPrefix(s[i+2:], "\r\n"):
			return i + 4
		}
	}
	return len(s)
}

func (b *replayBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	end := len(b.data)
	if b.sse {
		end = frameEnd(b.data, b.off)
	}
	n := copy(p, b.data[b.off:end])
	b.off += n
	return n, nil
}

func (b *replayBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}
