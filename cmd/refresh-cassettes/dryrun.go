package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/codegenie/codegenie/cassettes/refresh"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/manifest"
	"github.com/codegenie/codegenie/internal/refreshenv"
)

// dryRun lists the cassettes a refresh would record: each with the test
// that records it (and how: through a local fake, or against the live
// API), the hosts it calls, the other tests that open it, what its
// manifest says, and whether its tests missed in replay while they were
// run to find it (stale when the SDK's API version alone changed).
func dryRun(cfg refresh.Config, o *options, found []refresh.Cassette, stdout io.Writer) error {
	fmt.Fprintf(stdout, "refresh-cassettes: would record %d cassettes (the tests of %s%s):\n", len(found), o.pkgs, selection(o))
	mans := map[string]*manifest.Manifest{}
	for _, c := range found {
		fmt.Fprintf(stdout, "\n%s\n", c.Path)
		fmt.Fprintf(stdout, "    recorded by: %s %s (opened as %s)\n", c.Package, c.Test, c.Opened)
		if len(c.Redirects) > 0 {
			fmt.Fprintf(stdout, "    through:     a local fake or proxy for %s (cassettes.Redirect)\n", strings.Join(c.Redirects, ", "))
		} else {
			fmt.Fprintln(stdout, "    through:     the live API, with the keys the test reads from the environment")
		}
		hosts := "(none recorded yet)"
		if len(c.Hosts) > 0 {
			hosts = strings.Join(c.Hosts, ", ")
		}
		fmt.Fprintf(stdout, "    hosts:       %s\n", hosts)
		if others := othersThan(c); len(others) > 0 {
			fmt.Fprintf(stdout, "    replayed by: %s\n", strings.Join(others, ", "))
		}
		state, err := stateOf(cfg, c, mans)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "    state:       %s\n", state)
		switch {
		case len(c.VersionChanges) > 0:
			fmt.Fprintf(stdout, "    stale:       its SDK's API version changed since it was recorded (every request of its tests that missed in replay differs only in that): %s\n", versionChanges(c.VersionChanges))
		case c.Missed:
			fmt.Fprintln(stdout, "    misses:      a request of its tests found no recorded interaction in replay; run the test to see why")
		}
	}
	if cmd := rerecordStale(o, found); cmd != "" {
		fmt.Fprintf(stdout, "\nrefresh-cassettes: re-record the cassettes stale because their SDK's API version changed with:\n\t%s\n", cmd)
	}
	fmt.Fprintln(stdout, "\nrefresh-cassettes: -dry-run: nothing was recorded or changed")
	return nil
}

// rerecordStale is the command that re-records the cassettes of found
// stale because their SDK's API version changed, with the tests o
// selected; "" when there are none.
func rerecordStale(o *options, found []refresh.Cassette) string {
	var args []string
	if o.pkgs != "./..." {
		args = append(args, "-pkg", o.pkgs)
	}
	if o.run != "" {
		args = append(args, "-run", o.run)
	}
	n := len(args)
	for _, c := range found {
		if len(c.VersionChanges) > 0 {
			args = append(args, literalPattern(c.Path))
		}
	}
	if len(args) == n {
		return ""
	}
	return hint.Tool("refresh-cassettes", args...)
}

// literalPattern is a CASSETTE pattern that matches the path p alone.
func literalPattern(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// maxVersionChangesShown bounds the version changes a cassette's stale
// line lists.
const maxVersionChangesShown = 5

// versionChanges joins a cassette's VersionChanges for its stale line.
func versionChanges(changes []string) string {
	if len(changes) > maxVersionChangesShown {
		more := len(changes) - maxVersionChangesShown
		changes = append(changes[:maxVersionChangesShown:maxVersionChangesShown], fmt.Sprintf("and %d more", more))
	}
	return strings.Join(changes, "; ")
}

// othersThan lists the tests but the recording one that open c.
func othersThan(c refresh.Cassette) []string {
	var out []string
	for _, t := range c.OpenedBy {
		if t != c.Package+" "+c.Test {
			out = append(out, t)
		}
	}
	return out
}

// stateOf says whether c exists and what its directory's manifest records
// of it; mans caches the manifests read, by directory.
func stateOf(cfg refresh.Config, c refresh.Cassette, mans map[string]*manifest.Manifest) (string, error) {
	if !c.Exists {
		return "new: it does not exist yet", nil
	}
	dir := path.Dir(c.Path)
	m, ok := mans[dir]
	if !ok {
		root := cfg.Dir
		if root == "" {
			root = "."
		}
		var err error
		m, err = manifest.Read(filepath.Join(moduleRoot(root), filepath.FromSlash(dir), manifest.Name))
		if errors.Is(err, fs.ErrNotExist) {
			m, err = nil, nil
		}
		if err != nil {
			return "", err
		}
		mans[dir] = m
	}
	if m == nil {
		return "exists; its directory has no manifest (the refresh writes one)", nil
	}
	e, ok := m.Lookup(path.Base(c.Path))
	if !ok {
		return "exists; not in its directory's manifest", nil
	}
	s := "exists, digest " + e.Digest
	if e.RecordedAt != "" {
		s += ", recorded " + e.RecordedAt
	}
	if e.Pinned {
		s += ", pinned (a change needs -force -reason)"
	}
	return s, nil
}

// moduleRoot is the root of the module dir is in (dir when none).
func moduleRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if r := refreshenv.ModuleRoot(abs); r != "" {
		return r
	}
	return abs
}
