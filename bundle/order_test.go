package bundle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A bundle with two faults is refused for the same one every time: the
// check does not report whichever entry a map yields first.
func TestFaultReportedIsStable(t *testing.T) {
	const tries = 50
	t.Run("two unlisted files", func(t *testing.T) {
		dir, _ := writeBoth(t, single(realisticRun(t, 0)))
		dir = editDir(t, dir, func(d string) {
			require.NoError(t, os.MkdirAll(filepath.Join(d, blobDir), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(d, blobDir, strings.Repeat("0", 64)), []byte("x"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(d, snapshotFile), []byte("{}"), 0o644))
		})
		texts := map[string]bool{}
		for range tries {
			r, err := Config{}.Open(context.Background(), dir)
			if err == nil {
				r.Close()
			}
			require.Error(t, err)
			texts[err.Error()] = true
		}
		require.Len(t, texts, 1, "%d opens gave these errors: %v", tries, texts)
	})
	t.Run("two oversized pins", func(t *testing.T) {
		big := strings.Repeat("v", maxString+1)
		runs := []RunInfo{{ID: "run-000", Pin: map[string]string{"a": big, "b": big}, Output: emptyDigest}}
		texts := map[string]bool{}
		for range tries {
			err := checkRunInfos(runs)
			require.Error(t, err)
			texts[err.Error()] = true
		}
		require.Len(t, texts, 1, "%d checks gave these errors: %v", tries, texts)
	})
}
