package cassettes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codegenie/codegenie/internal/refreshenv"
)

// refreshRun is what a refresh of the module's cassettes (package
// cassettes/refresh) asks of this test binary through the environment
// (see A refresh's test runs in the package documentation): read once,
// in test binaries only.
var refreshRun = readRefreshRun()

// refreshHooks are the listing file and the staging directory a refresh
// named, and the module root of the working directory (the package's).
type refreshHooks struct {
	list, stage, root string

	mu        sync.Mutex
	redirects map[string]bool            // API roots Redirect was given, while listing
	missed    map[refreshenv.Missed]bool // the Missed lines written
}

func readRefreshRun() *refreshHooks {
	h := &refreshHooks{}
	if !testing.Testing() {
		return h
	}
	//detvet:ignore a refresh's request to a test binary, read once at start-up in test binaries only; it selects files, never an output
	list, stage := os.Getenv(refreshenv.List), os.Getenv(refreshenv.Stage)
	if list == "" && stage == "" {
		return h
	}
	//detvet:ignore the package directory go test runs a test binary in locates the module root a refresh stages by
	wd, err := os.Getwd()
	if err != nil {
		return h
	}
	h.root = refreshenv.ModuleRoot(wd)
	h.list = list
	if stage != "" {
		h.stage, _ = filepath.Abs(stage)
	}
	return h
}

// staged returns the staged copy of the cassette at path when a refresh
// stages this test binary's recordings: ok is false otherwise, and for a
// cassette outside the module.
func (h *refreshHooks) staged(path string) (string, bool) {
	if h.stage == "" || h.root == "" {
		return "", false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	return refreshenv.StagedPath(h.stage, h.root, abs)
}

// stagedCopy returns the staged copy of path to replay, when there is
// one (a regular file).
func (h *refreshHooks) stagedCopy(path string) (string, bool) {
	s, ok := h.staged(path)
	if !ok {
		return "", false
	}
	fi, err := os.Lstat(s)
	return s, err == nil && fi.Mode().IsRegular()
}

// noteRedirect notes, while listing, that requests for the API root
// from are redirected.
func (h *refreshHooks) noteRedirect(from *url.URL) {
	if h.list == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.redirects == nil {
		h.redirects = map[string]bool{}
	}
	h.redirects[strings.TrimSuffix(redactURL(from.String()), "/")] = true
}

// noteOpen appends, while listing, the Opened line of an Open of path.
func (h *refreshHooks) noteOpen(path string) error {
	if h.list == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	o := refreshenv.Opened{Path: abs, Opened: filepath.ToSlash(path)}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		o.Exists = true
		if p, err := readCassette(path, ""); err == nil {
			o.Hosts = hostsOf(p)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	o.Redirects = slices.Sorted(maps.Keys(h.redirects))
	return h.appendLine(o)
}

// noteMiss appends, while listing, the Missed line of a miss of the
// cassette at path, unless an earlier miss wrote the same line: a test
// that misses often lists each kind of miss once.
func (h *refreshHooks) noteMiss(path string, e *MissError) error {
	if h.list == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	m := refreshenv.Missed{Missed: abs}
	if e.APIVersion {
		m.VersionChange = e.VersionChange()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.missed[m] {
		return nil
	}
	if err := h.appendLine(m); err != nil {
		return err
	}
	if h.missed == nil {
		h.missed = map[refreshenv.Missed]bool{}
	}
	h.missed[m] = true
	return nil
}

// appendLine appends v as a line of JSON to the listing file; h.mu is
// held.
func (h *refreshHooks) appendLine(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(h.list, os.O_WRONLY|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		return fmt.Errorf("writing a refresh's listing: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("writing a refresh's listing: %w", werr)
	}
	return nil
}

// hostsOf lists the hosts p's requests went to, sorted, once each.
func hostsOf(p *parsed) []string {
	seen := map[string]bool{}
	for _, in := range p.c.Interactions {
		if u, err := url.Parse(in.Request.URL); err == nil && u.Host != "" {
			seen[strings.ToLower(u.Host)] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
