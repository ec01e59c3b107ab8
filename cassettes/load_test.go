package cassettes

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenRefusesOversizedFromItsSize: a cassette file larger than the
// cap is refused from its size, before a byte of it is read (a sparse
// file: reading it would allocate the cap).
func TestOpenRefusesOversizedFromItsSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxCassetteBytes+1))
	require.NoError(t, f.Close())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Open(path, Config{})
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "larger than")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated opening it")
}

// TestOpenRefusesNonRegularFile: a cassette path naming a directory (or
// a FIFO, which would block) is refused before reading.
func TestOpenRefusesNonRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir.yaml")
	require.NoError(t, os.Mkdir(path, 0o755))
	_, err := Open(path, Config{})
	require.ErrorContains(t, err, "not a regular file")
}

// BenchmarkOpenInteractions measures a cold Open (no manifest, so the
// secret ruleset runs too) of cassettes of n interactions, per
// interaction: the cost is linear in the file's bytes.
func BenchmarkOpenInteractions(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		path := benchCassette(b, n) + ".yaml"
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				emptyCaches()
				if _, err := Open(path, Config{AllowUnused: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/interaction")
		})
	}
}

// TestConcurrentOpensShareChecks: Opens of one content from many
// goroutines share its parse and its checks' findings.
func TestConcurrentOpensShareChecks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(smallCassetteText), 0o644))
	writeManifestFor(t, dir, "c.yaml")
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			c, err := Open(path, Config{AllowUnused: true, APIKey: fmt.Sprintf("key-number-%d-of-eight", i%2)})
			if err == nil {
				err = c.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}
