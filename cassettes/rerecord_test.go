package cassettes

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKeepsTiming: a measurement is noise around a recorded timing within
// a second of it, or between half and twice it.
func TestKeepsTiming(t *testing.T) {
	tests := []struct {
		name     string
		old, now time.Duration
		keepsOld bool
	}{
		{"same", 0, 0, true},
		{"a local fake under load", 0, 500 * time.Millisecond, true},
		{"a second of slack", 0, time.Second, true},
		{"past the slack from nothing", 0, 1100 * time.Millisecond, false},
		{"twice", 3 * time.Second, 6 * time.Second, true},
		{"half", 6 * time.Second, 3 * time.Second, true},
		{"more than twice", 3 * time.Second, 7100 * time.Millisecond, false},
		{"less than half", 10 * time.Second, 4 * time.Second, false},
		{"a slow recording, now fast", 5 * time.Second, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.keepsOld, keepsTiming(tt.old, tt.now))
		})
	}
}

// sseServer answers every request with a short server-sent-events
// stream, and /plain with JSON.
func sseServer(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/plain" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"n\":%d}\n\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func recordTimed(t *testing.T, path string, srv *httptest.Server) {
	t.Helper()
	c, err := Open(path, Config{Mode: Record, RealTransport: srv.Client().Transport})
	require.NoError(t, err)
	for _, p := range []string{"/plain", "/stream"} {
		readAll(t, do(t, c.Client(), srv.URL, plainReq{method: "POST", path: p, body: `{"q":1}`}))
	}
	require.NoError(t, c.Close())
}

var (
	durationLine = regexp.MustCompile(`(?m)^(\s+duration: ).*$`)
	offsetsLine  = regexp.MustCompile(`(?m)^(\s+X-Codegenie-Frame-Offsets:\n\s+- ).*$`)
)

// TestReRecordKeepsNoiseTiming: re-recording over a cassette keeps the
// recorded duration and frame offsets of each interaction it repeats
// while the new measurements are noise around them, so the file keeps its
// bytes; timing beyond that band is written anew.
func TestReRecordKeepsNoiseTiming(t *testing.T) {
	srv := sseServer(t)
	tests := []struct {
		name             string
		duration, offset string // set in the recorded file before re-recording
		keeps            bool
	}{
		{"noise around what was recorded", "800ms", "700,700,700", true},
		{"a slow recording, now fast", "5s", "5000,5000,5000", false},
		{"a stream that used to stall", "800ms", "0,0,4000", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			recordTimed(t, path, srv)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Regexp(t, offsetsLine, string(b))
			edited := durationLine.ReplaceAllString(string(b), "${1}"+tt.duration)
			edited = offsetsLine.ReplaceAllString(edited, "${1}"+tt.offset)
			require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))

			recordTimed(t, path, srv)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			if tt.keeps {
				require.Equal(t, edited, string(got))
				return
			}
			require.NotContains(t, string(got), tt.offset, "the stream's timing is measured anew")
			require.Equal(t, strings.Count(edited, "\n"), strings.Count(string(got), "\n"))
		})
	}
}
