package cassettes

import (
	"context"
	"io"
	"iter"
	"mime"
	"net/http"
	"strings"
	"sync"
)

func isSSE(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// frameEnd returns the end of the server-sent-events frame starting at
// off: just past the first blank line ("\n\n", "\r\r", "\r\n\r\n", or a
// mix of line ends such as "\r\n\n"), found in one forward scan, or len(s).
// It is the package's one SSE frame splitter.
func frameEnd(s string, off int) int {
	for i := off; i < len(s); i++ {
		var n int // length of the line end at i
		switch {
		case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
			n = 2
		case s[i] == '\n' || s[i] == '\r':
			n = 1
		default:
			continue
		}
		j := i + n
		switch {
		case j+1 < len(s) && s[j] == '\r' && s[j+1] == '\n':
			return j + 2
		case j < len(s) && (s[j] == '\n' || s[j] == '\r'):
			return j + 1
		}
		i = j - 1
	}
	return len(s)
}

// sseFrames yields the frames of an event stream, each with its ending
// blank line.
func sseFrames(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for off := 0; off < len(s); {
			end := frameEnd(s, off)
			if !yield(s[off:end]) {
				return
			}
			off = end
		}
	}
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

// replayBody is a replayed response body. For server-sent events each Read
// returns at most one frame, so streaming consumers see the events arrive
// one by one, as they would from a server. Reads fail once the request's
// context is done; a body abandoned that way before its end calls onCancel
// (once), which lets a retry be served the interaction again.
type replayBody struct {
	ctx      context.Context
	sse      bool
	onCancel func()
	pace     *pacer // nil: every frame at once

	mu        sync.Mutex
	data      string
	off       int
	end       int // end of the frame being delivered (sse)
	closed    bool
	cancelled bool
}

func newReplayBody(ctx context.Context, data string, sse bool) *replayBody {
	return &replayBody{ctx: ctx, data: data, sse: sse}
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
	end := len(b.data)
	if b.sse {
		// The frame's end is found at its start: scanned from inside a
		// frame, a line end could pair with the next frame's blank line.
		if b.off >= b.end {
			b.end = frameEnd(b.data, b.off)
		}
		end = b.end
	}
	n := copy(p, b.data[b.off:end])
	b.off += n
	b.pace.delivered(b.off, end)
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
