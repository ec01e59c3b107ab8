package fakellm

import (
	"net/http/httptest"
	"testing"
)

// NewHTTPTest starts a loopback httptest server backed by a new Server for
// cfg and closes it when the test ends. Use srv.URL as the adapter's BaseURL
// and srv.Client() (or any client) as its HTTP client.
func NewHTTPTest(t testing.TB, cfg Config) (*httptest.Server, *Server) {
	t.Helper()
	s := New(cfg)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, s
}
