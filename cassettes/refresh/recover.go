package refresh

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/manifest"
)

// Recover finishes or discards what killed or failed refreshes left in
// the module's cassette directories (cassettes.Recover), then verifies
// each (cassettes.Verify, warning to Config.Log about cassettes past
// their maximum age). The directories are dirs, or when there are none,
// every directory of the module holding a manifest or a staging folder
// (nested modules and hidden directories are not searched). It says on
// Config.Log what it found in each, and returns every failure joined.
func (c Config) Recover(ctx context.Context, dirs ...string) error {
	r, err := c.resolveOptions()
	if len(dirs) == 0 && err == nil {
		r, err = c.resolve()
	}
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		if dirs, err = r.cassetteDirs(); err != nil {
			return err
		}
		if len(dirs) == 0 {
			fmt.Fprintf(r.Log, "refresh: no cassette directory with a manifest or a staging folder under %s: nothing to recover\n", r.root)
			return nil
		}
	}
	var errs []error
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := cassettes.Recover(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, manifest.Name)); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(r.Log, "refresh: %s: no refresh is left unfinished; it has no manifest to verify\n", dir)
			continue
		}
		if err := cassettes.Verify(dir, cassettes.VerifyConfig{Now: r.Now, Warn: r.Log}); err != nil {
			errs = append(errs, fmt.Errorf("refresh: %s: no refresh is left unfinished, but the directory does not verify:\n%w", dir, err))
			continue
		}
		fmt.Fprintf(r.Log, "refresh: %s is consistent: no refresh is left unfinished, and every cassette matches the manifest\n", dir)
	}
	return errors.Join(errs...)
}

// cassetteDirs lists the directories of the module that hold a manifest
// or a staging folder, sorted.
func (r *resolved) cassetteDirs() ([]string, error) {
	var out []string
	err := filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != r.root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor") {
			return filepath.SkipDir
		}
		if p != r.root {
			if _, err := os.Lstat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(ents, func(e fs.DirEntry) bool {
			return e.Name() == manifest.Name || (e.IsDir() && strings.HasPrefix(e.Name(), ".refresh-"))
		}) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
