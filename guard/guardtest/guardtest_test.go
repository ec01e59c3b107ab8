package guardtest_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/guard"
	"github.com/codegenie/codegenie/guard/guardtest"
)

// recordingTB captures Fatal instead of stopping the test.
type recordingTB struct {
	testing.TB
	failed string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
}

func TestCountDials(t *testing.T) {
	old, oldResolver := http.DefaultTransport, net.DefaultResolver
	t.Run("counts and restores", func(t *testing.T) {
		c := guardtest.CountDials(t)
		require.NotSame(t, old, http.DefaultTransport)
		guardtest.NoDials(t, c)
		_, err := http.Get("http://example.com/")
		var rme *guard.ReplayModeError
		require.ErrorAs(t, err, &rme)
		_, err = net.Dial("tcp", "api.anthropic.com:443")
		require.Error(t, err)
		require.Greater(t, c.Dials(), 1, "the DNS lookup went through the counter: %q", c.Attempts())
		rec := &recordingTB{TB: t}
		guardtest.NoDials(rec, c)
		require.Contains(t, rec.failed, "tcp example.com:80")
	})
	require.Same(t, old, http.DefaultTransport, "CountDials did not restore http.DefaultTransport")
	require.Same(t, oldResolver, net.DefaultResolver, "CountDials did not restore net.DefaultResolver")
}

// A gate test that proves a replayed run makes no network connection: run
// every scenario with ctx, then check the counter.
func ExampleCountDials() {
	noNetwork := func(t *testing.T, run func(ctx context.Context) error) {
		dials := guardtest.CountDials(t)
		ctx := guard.WithDialCounter(guard.WithReplay(context.Background()), dials)
		if err := run(ctx); err != nil {
			t.Fatal(err)
		}
		guardtest.NoDials(t, dials)
	}
	_ = noNetwork
}
