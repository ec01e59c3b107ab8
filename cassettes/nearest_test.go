package cassettes

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// toolCall is one of three concurrent requests of the same shape: the
// same model and settings, and a prompt about one file, longer than
// jsondiff.LongString, so that the prompts of other files differ from it
// in one field too, as a changed word does.
func toolCall(file, word string, maxTokens int) plainReq {
	prompt := fmt.Sprintf("Review %s. %s Report every %s problem you find, with its line.", file, strings.Repeat("Be thorough and precise; quote the code. ", 4), word)
	return plainReq{method: "POST", path: "/v1/messages", body: fmt.Sprintf(
		`{"model":"claude-x","max_tokens":%d,"messages":[{"role":"user","content":%q}]}`, maxTokens, prompt)}
}

// TestMissNamesTheNearestUnderConcurrency: three identical-shape requests
// are replayed concurrently and one has one field changed; its miss is
// diffed against the recorded request it was meant to be (not the first
// in file order, not the next unused one), and the diff names exactly the
// changed field.
func TestMissNamesTheNearestUnderConcurrency(t *testing.T) {
	files := []string{"a.go", "b.go", "c.go"}
	tests := []struct {
		name    string
		changed plainReq
		field   string
	}{
		{"a word of the prompt", toolCall("b.go", "security", 1024), `["messages"][0]["content"]`},
		{"a number", toolCall("b.go", "style", 2048), `["max_tokens"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec []plainReq
			for _, f := range files {
				rec = append(rec, toolCall(f, "style", 1024))
			}
			srv := echoServer(t)
			path := recordPlain(t, t.TempDir(), "calls", srv, rec)
			c, err := Open(path, Config{AllowUnused: true, Hint: "rerecord"})
			require.NoError(t, err)
			sent := []plainReq{rec[0], tt.changed, rec[2]}
			errs := make([]error, len(sent))
			var wg sync.WaitGroup
			for i, r := range sent {
				wg.Go(func() {
					resp, err := send(c.Client(), srv.URL, r)
					if err == nil {
						resp.Body.Close()
					}
					errs[i] = err
				})
			}
			wg.Wait()
			require.NoError(t, errs[0])
			require.NoError(t, errs[2])
			require.ErrorIs(t, errs[1], ErrInteractionNotFound)
			msg := errs[1].Error()
			require.Contains(t, msg, "nearest recorded interaction: 1 (line")
			_, diff, ok := strings.Cut(msg, "body (recorded vs requested):\n")
			require.True(t, ok, msg)
			diff, _, _ = strings.Cut(diff, "\nif the request change")
			lines := strings.Split(strings.TrimSpace(diff), "\n")
			require.Len(t, lines, 1, "exactly one field differs: %s", diff)
			require.True(t, strings.HasPrefix(strings.TrimSpace(lines[0]), tt.field+":"), lines[0])
			require.NoError(t, c.Close())
		})
	}
}
