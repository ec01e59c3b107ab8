package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/hint"
	"github.com/codegenie/codegenie/internal/manifest"
)

// errDrifted: -check found drift (exit status 3).
var errDrifted = errors.New("the re-recorded cassettes drifted")

// recorded is one cassette recorded into the staging folder.
type recorded struct {
	t       target
	staged  string
	outcome []byte // what the recording run gave (see outcome)
	at      time.Time
	// oldDigest is the digest of the cassette it replaces ("" for a new
	// one), digest its own.
	oldDigest, digest string
}

// selectTargets returns the targets -run selects, and with -expired only
// those past their maximum age. An empty result with a nil error means
// there is nothing to do (already said on stdout).
func (cfg config) selectTargets(o *options, stdout io.Writer) ([]target, error) {
	var stale map[string]bool
	if o.expired {
		m, err := manifest.Read(filepath.Join(o.dir, manifest.Name))
		if errors.Is(err, fs.ErrNotExist) {
			m, err = &manifest.Manifest{Format: manifest.Format}, nil
		}
		if err != nil {
			return nil, err
		}
		stale = map[string]bool{}
		for _, s := range m.Stale(o.dir, cfg.now(), refreshCommand(o)) {
			stale[s.File] = true
		}
	}
	var selected []target
	var names []string
	for _, t := range targets() {
		names = append(names, t.key)
		if o.run.MatchString(t.key) && (stale == nil || stale[t.file]) {
			selected = append(selected, t)
		}
	}
	switch {
	case len(selected) > 0:
		return selected, nil
	case o.expired:
		fmt.Fprintf(stdout, "refresh-cassettes: no cassette in %s matching -run %q is past its maximum age\n", o.dir, o.runRE)
		return nil, nil
	}
	return nil, usagef("-run %q matches no cassette; there are: %s", o.runRE, strings.Join(names, ", "))
}

// refreshCommand names the command that re-records the cassette at path:
// this command, for that cassette's scenario path.
func refreshCommand(o *options) func(path string) string {
	return func(path string) string {
		args := []string{"-run", ""}
		for _, t := range targets() {
			if t.file == filepath.Base(path) {
				args[1] = "^" + regexp.QuoteMeta(t.key) + "$"
			}
		}
		if args[1] == "" {
			args = []string{"-expired"}
		}
		if o.dir != filepath.Join("cassettes", "testdata") {
			args = append(args, "-dir", o.dir)
		}
		return hint.Tool("refresh-cassettes", args...)
	}
}

func dryRun(o *options, selected []target, man *manifest.Manifest, stdout io.Writer) {
	fmt.Fprintf(stdout, "refresh-cassettes: would record %d cassettes into %s against %s:\n", len(selected), o.dir, o.baseURL)
	for _, t := range selected {
		state := "new"
		if e, ok := man.Lookup(t.file); ok {
			state = "exists, digest " + e.Digest
			if e.RecordedAt != "" {
				state += ", recorded " + e.RecordedAt
			}
			if e.Pinned {
				state += ", pinned (a change needs -force -reason)"
			}
		}
		fmt.Fprintf(stdout, "  %-28s %s (%s)\n", t.key, t.file, state)
	}
}

// recordAll records every selected target into stage, in order.
func (cfg config) recordAll(ctx context.Context, o *options, selected []target, stage string, stdout io.Writer) ([]recorded, error) {
	rt := cfg.transport
	if *o.base != *o.def {
		var err error
		if rt, err = cassettes.Redirect(o.def.String(), o.base.String(), rt); err != nil {
			return nil, usagef("-base-url: %v", err)
		}
	}
	var recs []recorded
	for i, t := range selected {
		fmt.Fprintf(stdout, "refresh-cassettes: [%d/%d] %s: recording %s\n", i+1, len(selected), t.key, t.file)
		r := recorded{t: t, staged: filepath.Join(stage, t.file), at: cfg.now()}
		var err error
		if r.outcome, err = cfg.record(ctx, t, r.staged, rt, stdout); err != nil {
			return nil, fmt.Errorf("%s: %w\nnothing was changed in %s", t.key, err, o.dir)
		}
		if cfg.afterRecord != nil {
			if err := cfg.afterRecord(r.staged); err != nil {
				return nil, err
			}
		}
		n, err := r.digests(filepath.Join(o.dir, t.file))
		if err != nil {
			return nil, err
		}
		state := "new"
		switch {
		case r.oldDigest == r.digest:
			state = "unchanged"
		case r.oldDigest != "":
			state = "changed"
		}
		fmt.Fprintf(stdout, "refresh-cassettes: [%d/%d] %s: recorded %d interactions (%s)\n", i+1, len(selected), t.key, n, state)
		recs = append(recs, r)
	}
	return recs, nil
}

// digests sets r's digest and that of the cassette at old it replaces
// (absent: ""), and returns how many interactions r holds.
func (r *recorded) digests(old string) (int, error) {
	recs, err := cassettes.ReadRecorded(r.staged)
	if err != nil {
		return 0, err
	}
	if r.digest, err = cassettes.Digest(r.staged); err != nil {
		return 0, err
	}
	if _, err := os.Lstat(old); errors.Is(err, fs.ErrNotExist) {
		return len(recs), nil
	}
	r.oldDigest, err = cassettes.Digest(old)
	return len(recs), err
}
