package guardtest

import (
	"net"
	"net/http"
	"testing"

	"github.com/codegenie/codegenie/guard"
)

// CountDials installs, until the end of the test, a refusing, counting
// transport as http.DefaultTransport and a resolver that sends its DNS
// connections through the same counter as net.DefaultResolver, and returns
// the counter. Do not call it from a parallel test.
func CountDials(t testing.TB) *guard.CountingDialer {
	t.Helper()
	c := &guard.CountingDialer{}
	tr := c.Transport()
	oldTransport, oldResolver := http.DefaultTransport, net.DefaultResolver
	http.DefaultTransport = tr
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: c.DialContext}
	t.Cleanup(func() {
		http.DefaultTransport, net.DefaultResolver = oldTransport, oldResolver
		tr.CloseIdleConnections()
	})
	return c
}

// NoDials fails the test if c saw any dial attempt, listing the attempts.
func NoDials(t testing.TB, c *guard.CountingDialer) {
	t.Helper()
	if err := c.NoDials(); err != nil {
		t.Fatal(err)
	}
}
