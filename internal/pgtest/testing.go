package pgtest

import (
	"context"
	"errors"
	"os"
	"testing"
)

// Required reports whether a missing server must fail the test rather than
// skip it: in CI (CI=true) or when CODEGENIE_REQUIRE_POSTGRES=1.
func Required() bool {
	//detvet:ignore CI and CODEGENIE_REQUIRE_POSTGRES decide whether a missing server fails the test, by design
	return os.Getenv("CI") == "true" || os.Getenv("CODEGENIE_REQUIRE_POSTGRES") == "1"
}

// Start starts a server for the test and stops it, removing its
// directory, when the test and its subtests end. Without the server
// binaries it skips the test, or fails it when Required.
func Start(t testing.TB) *Server {
	t.Helper()
	//detvet:ignore the role the server runs as, from the environment by design
	s, err := StartServer(context.Background(), Config{User: os.Getenv("CODEGENIE_PGTEST_USER")})
	if errors.Is(err, ErrNoServer) && !Required() {
		t.Skipf("%v (CI=true makes this a failure)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("pgtest: stop: %v", err)
		}
	})
	return s
}
