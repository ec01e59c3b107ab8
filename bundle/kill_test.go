package bundle

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// killWriterEnv makes the test binary a writer that replaces the bundle
// named by the variable, in both forms in turn, until it is killed.
const killWriterEnv = "BUNDLE_TEST_KILL_WRITER"

func killWriter(path string) {
	ctx := context.Background()
	bs := []*Bundle{single(syntheticEvents(300, 2000)), single(syntheticEvents(200, 100))}
	for i := 0; ; i++ {
		b := bs[i%2]
		var err error
		if i%4 < 2 {
			err = Config{Force: true}.Write(ctx, path, b)
		} else {
			err = Config{Force: true}.WriteFile(ctx, path, b)
		}
		if err != nil {
			panic(err)
		}
	}
}

// TestKilledWriteLeavesABundle kills a process that keeps replacing a
// bundle at random moments: after every kill the path holds a whole
// bundle, the old or the new one, and the next write leaves no leftovers.
func TestKilledWriteLeavesABundle(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("bundle directories are replaced in one step only where names can be exchanged")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	path := filepath.Join(root, "run.bundle")
	first := single(syntheticTape(t, 10, 10))
	require.NoError(t, Config{}.Write(context.Background(), path, first))
	chains := map[events.Digest]bool{
		events.Chain(first.Runs[0].Events, 0):        true,
		events.Chain(syntheticTape(t, 300, 2000), 0): true,
		events.Chain(syntheticTape(t, 200, 100), 0):  true,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	interrupted := 0
	for i := range 12 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killWriterEnv+"="+path)
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(20+rng.IntN(120)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		rep, err := Config{}.Verify(context.Background(), path)
		require.NoError(t, err, "kill %d left no whole bundle at the path", i)
		require.True(t, chains[rep.Runs[0].Chain], "kill %d: the bundle is neither the old nor a new one", i)
		ents, err := os.ReadDir(root)
		require.NoError(t, err)
		if len(ents) > 1 {
			interrupted++
		}
	}
	t.Logf("%d of 12 kills interrupted a write", interrupted)
	require.NoError(t, Config{Force: true}.Write(context.Background(), path, first))
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, ents, 1, "the next write removes the leftovers")
}
