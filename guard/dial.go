package guard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// refuse refuses every connection with a *ReplayModeError whose Op is
// OpDial and whose Detail names the host, and reports the attempt to the
// CountingDialer attached to ctx, if any.
func refuse(ctx context.Context, network, addr string) (net.Conn, error) {
	observe(ctx, network, addr, false)
	return nil, dialError(network, addr)
}

func dialError(network, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return errorf(OpDial, "%s connection to host %q (%s)", network, host, addr)
}

// Transport returns an *http.Transport that can never connect: every dial,
// plain or TLS, direct or through a proxy, fails with a *ReplayModeError
// naming the host, whether or not the request's context is in replay mode.
// Give it to a cassette as the transport it would fall back to, so that a
// cassette miss cannot reach the network.
func Transport() *http.Transport {
	return &http.Transport{
		Proxy:          nil,
		DialContext:    refuse,
		DialTLSContext: refuse,
	}
}

// CountingDialer counts dial attempts and the connections they make, and
// passes each attempt to Next. Use it to prove that a piece of code makes
// no network connection. It is safe for concurrent use; the zero value
// refuses every dial and counts it.
type CountingDialer struct {
	// Next makes the connection (net.Dialer.DialContext, say). If nil,
	// every attempt is refused with a *ReplayModeError, so nothing is ever
	// connected.
	Next func(ctx context.Context, network, addr string) (net.Conn, error)

	mu       sync.Mutex
	attempts []string
	conns    int
}

// DialContext records the attempt and dials with Next.
func (c *CountingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	next := c.Next
	if next == nil {
		next = refuseQuiet
	}
	conn, err := next(ctx, network, addr)
	c.record(network, addr, err == nil)
	return conn, err
}

// refuseQuiet is refuse without reporting to the context's counter, so that
// a CountingDialer attached to its own dial context counts once.
func refuseQuiet(_ context.Context, network, addr string) (net.Conn, error) {
	return nil, dialError(network, addr)
}

func (c *CountingDialer) record(network, addr string, connected bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts = append(c.attempts, network+" "+addr)
	if connected {
		c.conns++
	}
}

// Dials returns the number of dial attempts seen so far.
func (c *CountingDialer) Dials() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.attempts)
}

// Connections returns the number of attempts that made a connection.
func (c *CountingDialer) Connections() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns
}

// Attempts returns "network addr" for every attempt, in the order they
// were seen.
func (c *CountingDialer) Attempts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.attempts...)
}

// NoDials returns nil if no dial was attempted, and otherwise an error
// listing the attempts.
func (c *CountingDialer) NoDials() error {
	a := c.Attempts()
	if len(a) == 0 {
		return nil
	}
	return fmt.Errorf("guard: %d dial attempt(s) where none were allowed: %q; find the client that bypasses the cassette", len(a), a)
}

// Transport returns an *http.Transport whose every dial goes through c,
// with no proxy. TLS connections are dialed through c too; the handshake
// is the transport's.
func (c *CountingDialer) Transport() *http.Transport {
	return &http.Transport{Proxy: nil, DialContext: c.DialContext}
}

type counterKey struct{}

// WithDialCounter returns a copy of ctx to which c is attached: every dial
// attempted through Transport with this context (for HTTP, the request's
// context) is recorded by c as well.
func WithDialCounter(ctx context.Context, c *CountingDialer) context.Context {
	return context.WithValue(ctx, counterKey{}, c)
}

func observe(ctx context.Context, network, addr string, connected bool) {
	if c, ok := ctx.Value(counterKey{}).(*CountingDialer); ok && c != nil {
		c.record(network, addr, connected)
	}
}
