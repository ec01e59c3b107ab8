package properties

import (
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/guard"
	"github.com/codegenie/codegenie/guard/guardtest"
)

// TestReplayMakesNoNetworkConnection checks that with
// replay mode on, the gate makes no network connection. Every fixture
// scenario, on the happy and the retry path, runs through the contract
// test's replay-only cassette source with a replay-mode context that
// carries a dial counter, once with the contract test's live clock and IDs
// and once as a replayed run (fixtures.ReplaySetup: the recorded clock and
// the guard's deterministic IDs); meanwhile http.DefaultTransport and
// net.DefaultResolver count and refuse every dial (guardtest.CountDials).
// No dial may have been attempted. The test then proves the counter is
// live: a deliberate request through http.DefaultClient is refused and
// counted, so a pipeline that dialled would fail here.
//
// It swaps process-wide variables: never make it parallel.
func TestReplayMakesNoNetworkConnection(t *testing.T) {
	dials := guardtest.CountDials(t)
	ctx := guard.WithDialCounter(guard.WithReplay(t.Context()), dials)
	src := newSource(t)
	strip := stripped(t)
	runs := 0
	for _, sc := range fixtures.Scenarios() {
		for _, path := range paths {
			recorded, err := runPipeline(ctx, src, sc, path, 0)
			require.NoError(t, err)
			clock := guard.ClockFromTape(recorded.Events)
			key := recorded.RunKey.String()
			replayed, err := runReplayed(ctx, src, sc, path, key, clock)
			require.NoError(t, err)
			runs += 2

			// The replayed run is the recorded one, but for the
			// allowlisted fields, which now come from the guard's
			// stand-ins and not from the live sources.
			require.Equal(t, recorded.RunKey, replayed.RunKey)
			require.Equal(t, recorded.Transform.DiffBytes, replayed.Transform.DiffBytes)
			require.Nil(t, events.Compare(recorded.Events, replayed.Events, strip), "%s/%s", sc.Name, path)
			require.NoError(t, clock.Err())
			require.Equal(t, len(recorded.Events), clock.Reads())
			ids := guard.IDSource(key)
			for i, e := range replayed.Events {
				require.Equal(t, recorded.Events[i].EmittedAt, e.EmittedAt, "%s/%s event %d: not the recorded time", sc.Name, path, i+1)
				require.Equal(t, ids(), e.AuditEventID, "%s/%s event %d", sc.Name, path, i+1)
			}
		}
	}
	require.GreaterOrEqual(t, runs, 12, "three scenarios, two paths, two setups")
	guardtest.NoDials(t, dials)

	// The counter is live: a dial made in this test is refused and counted.
	// The port is closed, so nothing could answer even if the dial got out.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	var rme *guard.ReplayModeError
	require.ErrorAs(t, err, &rme)
	require.Equal(t, guard.OpDial, rme.Op)
	require.Contains(t, rme.Detail, `"127.0.0.1"`)
	require.Equal(t, []string{"tcp " + addr}, dials.Attempts())
	require.Zero(t, dials.Connections())
	require.Error(t, dials.NoDials(), "NoDials would have failed the test")
}
