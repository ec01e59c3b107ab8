package cassettes

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMissAnswer: a miss of a request with an X-Stainless-* header (in
// any case) is a 404 response with X-Should-Retry: false whose body's
// Reads and CassetteMiss return the miss; a miss of any other request is
// the transport's error.
func TestMissAnswer(t *testing.T) {
	t.Parallel()
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, []byte("---\nversion: 2\ninteractions: []\n"), 0o644))
	tests := []struct {
		name     string
		header   http.Header
		response bool
	}{
		{"plain client", http.Header{"Content-Type": {"application/json"}}, false},
		{"an SDK that says nothing of retries", http.Header{"User-Agent": {"Go-http-client/1.1"}, "X-Amz-Date": {"20260101T000000Z"}}, false},
		{"stainless retry count", http.Header{"X-Stainless-Retry-Count": {"0"}}, true},
		{"stainless lang only", http.Header{"X-Stainless-Lang": {"go"}}, true},
		{"header name as sent on the wire", http.Header{"x-stainless-os": {"Linux"}}, true},
		{"prefix alone", http.Header{"X-Stainless-": {"x"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Open(empty, Config{})
			require.NoError(t, err)
			defer c.Close()
			req, err := http.NewRequest("POST", "https://api.openai.com/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
			require.NoError(t, err)
			req.Header = tt.header
			resp, err := c.Transport().RoundTrip(req)
			if !tt.response {
				require.ErrorIs(t, err, ErrInteractionNotFound)
				require.Nil(t, resp)
				return
			}
			require.NoError(t, err)
			require.Equal(t, http.StatusNotFound, resp.StatusCode)
			require.Equal(t, "false", resp.Header.Get("X-Should-Retry"))
			require.Same(t, req, resp.Request)
			_, err = io.ReadAll(resp.Body)
			require.ErrorIs(t, err, ErrInteractionNotFound)
			require.ErrorContains(t, err, "the cassette has no interactions")
			m, ok := resp.Body.(interface{ CassetteMiss() error })
			require.True(t, ok, "the body names the miss to a transport around the cassette")
			require.ErrorIs(t, m.CassetteMiss(), ErrInteractionNotFound)
			require.NoError(t, resp.Body.Close())
		})
	}
}
