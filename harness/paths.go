package harness

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/codegenie/codegenie/internal/hint"
)

// moduleRoots is the module root above the working directory as this
// process sees it, and all the ways it does: that path and, when it
// differs, the path with symbolic links resolved (a child process runs
// below a link to the root), longest first.
type moduleRoots struct {
	seen string
	all  []string
}

var roots = sync.OnceValue(func() moduleRoots {
	//detvet:ignore paths are made relative to the module root found from the working directory
	wd, err := os.Getwd()
	if err != nil {
		return moduleRoots{}
	}
	root, err := hint.RootOf(wd)
	if err != nil {
		return moduleRoots{}
	}
	r := moduleRoots{seen: root, all: []string{root}}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		r.all = append(r.all, real)
		if len(real) > len(root) {
			r.all[0], r.all[1] = real, root
		}
	}
	return r
})

// stablePath returns path relative to the working directory when it is
// an absolute path inside the module root, so that a cassette path, and
// every error that names it, is the same in every process of a gate,
// wherever the process runs.
func stablePath(path string) string {
	r := roots()
	//detvet:ignore paths are made relative to the working directory, the same in every process of a gate
	wd, err := os.Getwd()
	if !filepath.IsAbs(path) || err != nil || r.seen == "" {
		return path
	}
	pkg, err := filepath.Rel(r.seen, wd)
	if err != nil {
		return path
	}
	for _, root := range r.all {
		if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
			if out, err := filepath.Rel(pkg, rel); err == nil {
				return out
			}
		}
	}
	return path
}

// relativeText rewrites the module root (either way this process sees
// it) in s to paths relative to it, so an error text names the same
// paths in every process of a gate.
func relativeText(s string) string {
	for _, root := range roots().all {
		s = strings.ReplaceAll(s, root+string(filepath.Separator), "")
	}
	return s
}
