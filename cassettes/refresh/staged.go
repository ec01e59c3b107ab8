package refresh

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/internal/refreshenv"
)

// Staged is a refresh between recording and applying: the cassettes
// re-recorded into a staging directory, each cassette directory's refresh
// lock held (so no other refresh, Apply or recording by the test flag
// changes them meanwhile). Review and Parity read the staged copies;
// Apply moves them into the module; Close ends the refresh, releasing the
// locks and removing the staging directory (with what was not applied).
type Staged struct {
	// Dir is the staging directory: the copy of the cassette at path P
	// from the module root is Dir/P.
	Dir string
	// Cassettes are the cassettes recorded, by path.
	Cassettes []Cassette
	// RecordedAt is when they were recorded (Config.Now).
	RecordedAt time.Time

	r     *resolved
	work  string
	pkgs  map[string]*testPackage // by import path, with their binaries
	locks map[string]*cassettes.DirLock
}

// Record re-records cs (from Find) through the tests that record them,
// into a new staging directory: it takes the refresh lock of each
// cassette directory (cassettes.LockDir, waiting for another refresh up
// to a minute) and finishes or discards what a killed refresh left there
// (cassettes.DirLock.Recover), then runs, per package, the recording
// tests with the record switch selecting exactly these cassettes and
// CODEGENIE_CASSETTES_STAGE set: each recording goes through the test's
// own code (its cassettes.Redirect to a fake, or the live API with the
// keys of Config.Env) and is saved to the staging directory, and a later
// opening of a cassette in the same run replays its staged copy. The
// module's files are not touched. A test that fails, or a cassette its
// test did not record, fails Record, naming them; nothing was changed.
// Close the result.
func (c Config) Record(ctx context.Context, cs []Cassette) (_ *Staged, err error) {
	r, err := c.resolve()
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%w: no cassettes to record", errUsage)
	}
	for _, c := range cs {
		if !filepath.IsLocal(filepath.FromSlash(c.Path)) || !strings.HasSuffix(c.Path, ".yaml") || c.Test == "" ||
			c.Package == "" || strings.HasPrefix(c.Package, "-") || c.Opened == "" {
			return nil, fmt.Errorf("%w: cassette %q recorded by %q %q (opened as %q) is not one Find returns: a .yaml path inside the module, the package and test that record it",
				errUsage, c.Path, c.Package, c.Test, c.Opened)
		}
	}
	work, err := os.MkdirTemp("", "refresh-cassettes-")
	if err != nil {
		return nil, err
	}
	s := &Staged{Dir: filepath.Join(work, "stage"), Cassettes: slices.Clone(cs), r: r, work: work,
		pkgs: map[string]*testPackage{}, locks: map[string]*cassettes.DirLock{}}
	defer func() {
		if err != nil {
			// Nothing was applied: the stage and the locks go.
			s.Close()
		}
	}()
	slices.SortFunc(s.Cassettes, func(a, b Cassette) int { return strings.Compare(a.Path, b.Path) })
	for _, dir := range s.dirs() {
		l, err := cassettes.LockDir(ctx, dir)
		if err != nil {
			return nil, err
		}
		s.locks[dir] = l
		if err := l.Recover(); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(s.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := s.buildAll(ctx); err != nil {
		return nil, err
	}
	s.RecordedAt = r.Now()
	for _, ip := range s.packages() {
		p, group := s.pkgs[ip], s.of(ip)
		var tests, opened []string
		for _, c := range group {
			tests = append(tests, c.Test)
			opened = append(opened, "^"+regexp.QuoteMeta(c.Opened)+"$")
		}
		tests = slices.Compact(slices.Sorted(slices.Values(tests)))
		fmt.Fprintf(r.Log, "refresh: recording %d cassettes through %s %s\n", len(group), ip, strings.Join(tests, ", "))
		out, err := r.runBinary(ctx, p, []string{refreshenv.Stage + "=" + s.Dir}, "-test.run", runPattern(tests), "-test.count=1",
			"-"+cassettes.RecordFlag+"="+strings.Join(opened, "|"))
		if err != nil {
			return nil, fmt.Errorf("refresh: recording through %s %s failed: %w; nothing was changed in the module:\n%s", ip, strings.Join(tests, ", "), err, tail(out))
		}
		for _, c := range group {
			if _, err := os.Stat(s.staged(c)); err != nil {
				return nil, fmt.Errorf("refresh: %s %s passed but did not record %s (it did not open it as %s under the record switch); nothing was changed in the module:\n%s",
					ip, c.Test, c.Path, c.Opened, tail(out))
			}
		}
	}
	return s, nil
}

// buildAll builds the test binary of every package that records a staged
// cassette.
func (s *Staged) buildAll(ctx context.Context) error {
	bins := filepath.Join(s.work, "bin")
	if err := os.Mkdir(bins, 0o755); err != nil {
		return err
	}
	for _, ip := range s.packages() {
		out, err := s.r.goCmd(ctx, "list", "-f", "{{.Dir}}", ip)
		if err != nil {
			return err
		}
		p := &testPackage{ImportPath: ip, Dir: strings.TrimSpace(string(out))}
		ok, err := s.r.build(ctx, p, bins)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("refresh: %s has no tests to record with", ip)
		}
		s.pkgs[ip] = p
	}
	return nil
}

// staged is the path of c's staged copy.
func (s *Staged) staged(c Cassette) string { return filepath.Join(s.Dir, filepath.FromSlash(c.Path)) }

// module is the path of c in the module.
func (s *Staged) module(c Cassette) string {
	return filepath.Join(s.r.root, filepath.FromSlash(c.Path))
}

// dirs lists the directories of the staged cassettes, sorted.
func (s *Staged) dirs() []string {
	var out []string
	for _, c := range s.Cassettes {
		out = append(out, filepath.Dir(s.module(c)))
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// packages lists the packages whose tests record the staged cassettes,
// sorted.
func (s *Staged) packages() []string {
	var out []string
	for _, c := range s.Cassettes {
		out = append(out, c.Package)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// of returns the staged cassettes package ip records.
func (s *Staged) of(ip string) []Cassette {
	var out []Cassette
	for _, c := range s.Cassettes {
		if c.Package == ip {
			out = append(out, c)
		}
	}
	return out
}

// Review compares each staged cassette with the one it replaces (see
// package cassettes/review): the cassettes are named by their path from
// the module root.
func (s *Staged) Review(ctx context.Context) (*review.Review, error) {
	names := make([]string, len(s.Cassettes))
	for i, c := range s.Cassettes {
		names[i] = c.Path
	}
	return s.r.Review.Files(ctx, s.r.root, s.Dir, names)
}

// Parity replays the staged cassettes through the tests that recorded
// them, with CODEGENIE_CASSETTES_STAGE set and no record switch, so that
// every opening of a staged cassette replays its staged copy (a
// determinism gate in the test, harness.Check, replays it as many times
// as it runs): the tests must pass. A failing test fails Parity with its
// output; nothing was changed.
func (s *Staged) Parity(ctx context.Context) error {
	for _, ip := range s.packages() {
		var tests []string
		for _, c := range s.of(ip) {
			tests = append(tests, c.Test)
		}
		tests = slices.Compact(slices.Sorted(slices.Values(tests)))
		fmt.Fprintf(s.r.Log, "refresh: replaying the staged cassettes through %s %s\n", ip, strings.Join(tests, ", "))
		out, err := s.r.runBinary(ctx, s.pkgs[ip], []string{refreshenv.Stage + "=" + s.Dir}, "-test.run", runPattern(tests), "-test.count=1")
		if err != nil {
			return fmt.Errorf("refresh: parity: %s %s fail when they replay the staged cassettes (%w); nothing was changed in the module:\n%s",
				ip, strings.Join(tests, ", "), err, tail(out))
		}
	}
	return nil
}

// Close ends the refresh: it removes the staging directory and the built
// test binaries, removes the staging folders of cassette directories that
// were not applied, and releases every lock. It reports the first
// failure.
func (s *Staged) Close() error {
	var errs []error
	for _, dir := range slices.Sorted(maps.Keys(s.locks)) {
		errs = append(errs, s.locks[dir].Unlock())
	}
	s.locks = nil
	errs = append(errs, os.RemoveAll(s.work))
	return errors.Join(errs...)
}
