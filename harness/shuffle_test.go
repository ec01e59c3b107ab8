package harness

import (
	"flag"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// TestShuffleSeedInReport: Main gives go test's -shuffle a seed of its own
// when the command line leaves it unset or "on", and every report names
// that seed and the command that runs the same order again.
func TestShuffleSeedInReport(t *testing.T) {
	f := flag.Lookup("test.shuffle")
	require.NotNil(t, f)
	old := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(old) })
	if inChild() {
		Config{Iterations: 4, Floor: 4, Processes: 1}.check(t, "shuffle-seed", toyPipeline{}.run, false)
		return
	}
	require.NoError(t, f.Value.Set("on"))
	shuffleTests()
	seed := f.Value.String()
	_, err := strconv.ParseInt(seed, 10, 64)
	require.NoError(t, err, "-test.shuffle is a seed, not %q", seed)
	rep := Config{Iterations: 4, Floor: 4, Processes: 1}.check(t, "shuffle-seed", toyPipeline{}.run, false)
	require.Equal(t, gate.Pass, rep.Verdict, "%s", rep)
	require.Contains(t, rep.Isolation, "-test.shuffle="+seed)
	require.Contains(t, rep.String(), "go test -shuffle="+seed+" runs them in this order again")

	require.NoError(t, f.Value.Set("off"))
	require.Empty(t, orderNote(), "an unshuffled order is not announced")
}
