package review

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Bounds of the golden search: files larger than maxGoldenBytes are
// skipped, and more than maxGoldenFiles files is an error.
const (
	maxGoldenBytes = 4 << 20
	maxGoldenFiles = 10000
)

// findGoldens lists the files under dirs that hold the old digest of a
// cassette the refresh changes, with those cassettes, by path.
func findGoldens(ctx context.Context, dirs []string, cs []Cassette) ([]Golden, error) {
	moving := map[string][]string{} // old digest -> cassette files
	for _, c := range cs {
		if c.OldDigest != "" && c.OldDigest != c.NewDigest {
			moving[c.OldDigest] = append(moving[c.OldDigest], c.File)
		}
	}
	if len(moving) == 0 {
		return nil, nil
	}
	digests := make([]string, 0, len(moving))
	for d := range moving {
		digests = append(digests, d)
	}
	slices.Sort(digests)
	var out []Golden
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if files++; files > maxGoldenFiles {
				return fmt.Errorf("review: more than %d files under the golden directories %q; name narrower ones", maxGoldenFiles, dirs)
			}
			b, err := readSmall(path)
			if err != nil || b == nil {
				return err
			}
			g := Golden{Path: filepath.ToSlash(path)}
			for _, dg := range digests {
				if bytes.Contains(b, []byte(dg)) {
					g.Cassettes = append(g.Cassettes, moving[dg]...)
				}
			}
			if len(g.Cassettes) > 0 {
				slices.Sort(g.Cassettes)
				out = append(out, g)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("review: golden directory %s: %w", dir, err)
		}
	}
	slices.SortFunc(out, func(a, b Golden) int { return cmp.Compare(a.Path, b.Path) })
	return slices.CompactFunc(out, func(a, b Golden) bool { return a.Path == b.Path }), nil
}

// readSmall reads path, or returns nil for a file over maxGoldenBytes.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGoldenBytes+1))
	if err != nil || len(b) > maxGoldenBytes {
		return nil, err
	}
	return b, nil
}
