package chunking

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForRun: run 0 is delivered as recorded; any five consecutive later
// runs have every kind; a plan depends on its run alone.
func TestForRun(t *testing.T) {
	require.Equal(t, Plan{}, ForRun(0))
	for first := 1; first < 40; first++ {
		kinds := map[Kind]bool{}
		for run := first; run < first+5; run++ {
			kinds[ForRun(run).Kind] = true
		}
		require.Len(t, kinds, 5, "runs %d to %d", first, first+4)
	}
	require.Equal(t, ForRun(17), ForRun(17))
	require.NotEqual(t, ForRun(2).Seed, ForRun(7).Seed)
}

// TestCutter: the steps of a body depend on the plan and the body alone,
// and stay within the kind's bounds.
func TestCutter(t *testing.T) {
	require.Nil(t, Plan{}.Cutter(0))
	steps := func(p Plan, body int) []Step {
		c := p.Cutter(body)
		out := make([]Step, 200)
		for i := range out {
			out[i] = c.Next()
		}
		return out
	}
	for run := 1; run <= 5; run++ {
		p := ForRun(run)
		if p.Kind == AsRecorded {
			continue
		}
		a := steps(p, 3)
		require.Equal(t, a, steps(p, 3), "%s", p)
		if p.Kind != Bytes {
			require.NotEqual(t, a, steps(p, 4), "%s: bodies are cut differently", p)
		}
		for _, s := range a {
			switch p.Kind {
			case Split:
				require.True(t, s.Max >= 1 && s.Max <= 32 && !s.Join, "%+v", s)
			case Joined:
				require.True(t, s.Max >= 256 && s.Max <= 8192 && s.Join, "%+v", s)
			case Bytes:
				require.Equal(t, Step{Max: 1}, s)
			}
		}
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	require.Equal(t, Plan{}, From(ctx))
	require.Equal(t, ForRun(3), From(With(ctx, ForRun(3))))
	require.Equal(t, "single bytes", ForRun(3).String())
}
