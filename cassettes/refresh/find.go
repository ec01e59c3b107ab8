package refresh

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/codegenie/codegenie/internal/refreshenv"
)

// Cassette is one cassette that the module's tests open.
type Cassette struct {
	// Path is its path from the module root, slash-separated.
	Path string `json:"path"`
	// Package and Test are the test that records it: its package's import
	// path and its top-level name. Of the tests that open it, that is the
	// first (by package, then name) that records through a local fake
	// (see Redirects), or else the first.
	Package string `json:"package"`
	Test    string `json:"test"`
	// Opened is the path as that test opens it, from its package's
	// directory: what the record switch (-cassettes.record) matches.
	Opened string `json:"opened"`
	// OpenedBy lists every test that opens it, as "package TestName",
	// sorted.
	OpenedBy []string `json:"opened_by"`
	// Exists says the file exists; a refresh records one that does not.
	Exists bool `json:"exists"`
	// Hosts are the hosts its recorded requests went to, sorted.
	Hosts []string `json:"hosts,omitempty"`
	// Redirects are the API roots the recording test sends to a local
	// fake or a proxy with cassettes.Redirect. Empty: it records against
	// the live API, with the keys its test reads from the environment.
	Redirects []string `json:"redirects,omitempty"`
	// Missed says a request its tests sent while they were run to find
	// it found no recorded interaction (a cassettes.MissError): the
	// cassette no longer serves them. VersionChanges, when every such
	// miss differed from its recording only in the API version its SDK
	// sends (MissError.APIVersion), lists those changes
	// (MissError.VersionChange), sorted, once each: the SDK was upgraded
	// since the recording, and a new API version can change the answer,
	// so the cassette is stale and recording it again brings it up to
	// date.
	Missed         bool     `json:"missed,omitempty"`
	VersionChanges []string `json:"version_changes,omitempty"`
}

// opening is one Open a listing run saw: by which test, of which
// package.
type opening struct {
	pkg, test string
	refreshenv.Opened
}

// Find finds the cassettes the module's tests open: it builds the test
// binary of every package of Config.Packages whose tests link package
// cassettes, and runs each of its top-level tests (those Config.Run
// selects) alone, with CODEGENIE_CASSETTES_LIST set, so that every
// cassettes.Open says which cassette it opened (see A refresh's test runs
// in package cassettes). A test may fail, as one whose cassette does not
// exist yet does: the cassettes it opened are still found, and those
// it missed in replay say so (Cassette.Missed, VersionChanges). Cassettes
// outside the module (a test's temporary directory) are left out, and so
// are those Config.Cassettes or Config.Expired does not select. The
// result is sorted by path; it is empty, with no error, when nothing is
// selected.
func (c Config) Find(ctx context.Context) ([]Cassette, error) {
	r, err := c.resolve()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "refresh-cassettes-find-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	pkgs, err := r.testPackages(ctx)
	if err != nil {
		return nil, err
	}
	return r.find(ctx, pkgs, work)
}

// find lists the cassettes the tests of pkgs open, building their
// binaries into work.
func (r *resolved) find(ctx context.Context, pkgs []*testPackage, work string) ([]Cassette, error) {
	list := filepath.Join(work, "opened.jsonl")
	var opens []opening
	var misses []refreshenv.Missed
	for _, p := range pkgs {
		if ok, err := r.build(ctx, p, work); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		names, err := r.tests(ctx, p)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(r.Log, "refresh: running the %d tests of %s one by one, listing the cassettes each opens\n", len(names), p.ImportPath)
		for _, n := range names {
			if err := os.WriteFile(list, nil, 0o600); err != nil {
				return nil, err
			}
			out, err := r.runBinary(ctx, p, []string{refreshenv.List + "=" + list}, "-test.run", runPattern([]string{n}), "-test.count=1")
			if err != nil && !errors.Is(err, errTestFailed) {
				return nil, fmt.Errorf("refresh: running %s %s: %w\n%s", p.ImportPath, n, err, tail(out))
			}
			got, missed, err := readListing(list)
			if err != nil {
				return nil, fmt.Errorf("refresh: %s %s: %w", p.ImportPath, n, err)
			}
			for _, o := range got {
				opens = append(opens, opening{p.ImportPath, n, o})
			}
			misses = append(misses, missed...)
		}
	}
	found := r.collate(opens)
	r.noteMisses(found, misses)
	return r.selected(found)
}

// maxListing bounds a listing file read back.
const maxListing = 64 << 20

// readListing reads the Opened and the Missed lines of a listing run.
func readListing(path string) ([]refreshenv.Opened, []refreshenv.Missed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxListing {
		return nil, nil, fmt.Errorf("the listing %s is larger than %d bytes", path, maxListing)
	}
	var opens []refreshenv.Opened
	var misses []refreshenv.Missed
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			refreshenv.Opened
			refreshenv.Missed
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, nil, fmt.Errorf("the listing %s has a line that is neither an Open nor a miss: %v", path, err)
		}
		if l.Missed.Missed != "" {
			misses = append(misses, l.Missed)
			continue
		}
		opens = append(opens, l.Opened)
	}
	return opens, misses, sc.Err()
}

// collate makes one Cassette per file of the module that was opened.
func (r *resolved) collate(opens []opening) []Cassette {
	by := map[string][]opening{}
	for _, o := range opens {
		if rel, ok := r.rel(o.Path); ok {
			by[rel] = append(by[rel], o)
		}
	}
	var out []Cassette
	for rel, ops := range by {
		c := Cassette{Path: rel}
		hosts := map[string]bool{}
		for _, o := range ops {
			c.OpenedBy = append(c.OpenedBy, o.pkg+" "+o.test)
			c.Exists = c.Exists || o.Exists
			for _, h := range o.Hosts {
				hosts[h] = true
			}
		}
		// The recorder: a test that records through a local fake, else
		// the first.
		local := func(o opening) int {
			if len(o.Redirects) > 0 {
				return 0
			}
			return 1
		}
		slices.SortStableFunc(ops, func(a, b opening) int {
			return cmp.Or(cmp.Compare(local(a), local(b)), strings.Compare(a.pkg, b.pkg), strings.Compare(a.test, b.test))
		})
		owner := ops[0]
		c.Package, c.Test, c.Opened, c.Redirects = owner.pkg, owner.test, owner.Opened.Opened, owner.Redirects
		c.OpenedBy = slices.Compact(slices.Sorted(slices.Values(c.OpenedBy)))
		c.Hosts = slices.Sorted(maps.Keys(hosts))
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Cassette) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// rel is the path from the module root (slash-separated) of the
// cassette at the absolute path abs; ok is false for a file outside the
// module or not named *.yaml.
func (r *resolved) rel(abs string) (string, bool) {
	rel, err := filepath.Rel(r.root, abs)
	if err != nil || !filepath.IsLocal(rel) || !strings.HasSuffix(rel, ".yaml") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// noteMisses sets Missed and VersionChanges of the cassettes of found
// (sorted by path) that misses tell of.
func (r *resolved) noteMisses(found []Cassette, misses []refreshenv.Missed) {
	changes := map[string]map[string]bool{} // by path; nil after a miss not only in the API version
	for _, m := range misses {
		rel, ok := r.rel(m.Missed)
		if !ok {
			continue
		}
		seen, missed := changes[rel]
		switch {
		case m.VersionChange == "":
			changes[rel] = nil
		case !missed:
			changes[rel] = map[string]bool{m.VersionChange: true}
		case seen != nil:
			seen[m.VersionChange] = true
		}
	}
	for i := range found {
		seen, missed := changes[found[i].Path]
		found[i].Missed = missed
		if seen != nil {
			found[i].VersionChanges = slices.Sorted(maps.Keys(seen))
		}
	}
}

// selected keeps the cassettes Config.Cassettes and Config.Expired
// select.
func (r *resolved) selected(found []Cassette) ([]Cassette, error) {
	var out []Cassette
	stale := map[string]bool{}
	for _, c := range found {
		if !r.selects(c.Path) {
			continue
		}
		if r.Expired {
			dir := filepath.Join(r.root, filepath.FromSlash(c.Path), "..")
			if _, done := stale[dir]; !done {
				if err := r.staleIn(filepath.Clean(dir), stale); err != nil {
					return nil, err
				}
			}
			if !stale[filepath.Join(r.root, filepath.FromSlash(c.Path))] {
				continue
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// staleIn marks in stale the cassettes of dir's manifest past their
// maximum age, and dir as looked at.
func (r *resolved) staleIn(dir string, stale map[string]bool) error {
	stale[dir] = false
	m, err := manifest.Read(filepath.Join(dir, manifest.Name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, s := range m.Stale(dir, r.Now(), func(string) string { return "" }) {
		stale[s.Path] = true
	}
	return nil
}
