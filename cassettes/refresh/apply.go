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
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/manifest"
)

// Apply moves the staged cassettes that changed into the module, one
// cassette directory at a time, each atomically under its refresh lock
// and with its manifest's history entry (cassettes.Apply, with
// Config.Force and Config.Reason, at RecordedAt): a reader of a
// directory sees all its cassettes and manifest old, or all new. It
// returns the paths it applied, sorted.
//
// A staged cassette whose digest equals the one it replaces is left out,
// so a refresh that changed nothing leaves every file byte for byte as
// it was; but for one past its maximum age, whose recorded_at moves. A
// directory without a manifest gets one listing every cassette in it
// (those not re-recorded as they are). A cassette a manifest pins (a
// golden digest depends on it) is replaced only with Config.Force:
// otherwise Apply changes nothing and says which. If applying a
// directory fails, the directories before it stay applied: the error
// names them.
func (s *Staged) Apply(ctx context.Context) ([]string, error) {
	at := s.RecordedAt.UTC().Format(time.RFC3339)
	type plan struct {
		dir     string
		updates []cassettes.Update
		paths   []string
	}
	var plans []plan
	var pinned []string
	for _, dir := range s.dirs() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := plan{dir: dir}
		m, err := manifest.Read(filepath.Join(dir, manifest.Name))
		fresh := errors.Is(err, fs.ErrNotExist)
		if err != nil && !fresh {
			return nil, err
		}
		stale := map[string]bool{}
		if !fresh {
			for _, st := range m.Stale(dir, s.r.Now(), func(string) string { return "" }) {
				stale[st.File] = true
			}
		}
		staged := map[string]bool{}
		changed := false
		for _, c := range s.Cassettes {
			if filepath.Dir(s.module(c)) != dir {
				continue
			}
			file := filepath.Base(s.module(c))
			staged[file] = true
			newDigest, err := cassettes.Digest(s.staged(c))
			if err != nil {
				return nil, err
			}
			oldDigest := ""
			if c.Exists || exists(s.module(c)) {
				if oldDigest, err = cassettes.Digest(s.module(c)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, err
				}
			}
			if oldDigest == newDigest && !stale[file] {
				if fresh {
					// Listed, as it is, if the directory gets a manifest.
					p.updates = append(p.updates, cassettes.Update{File: file, Staged: s.module(c), Reason: s.r.Reason, RecordedAt: s.RecordedAt})
				}
				continue
			}
			changed = true
			if !fresh {
				if e, ok := m.Lookup(file); ok && e.Pinned && e.Digest != newDigest && !s.r.Force {
					pinned = append(pinned, c.Path)
				}
			}
			p.updates = append(p.updates, cassettes.Update{File: file, Staged: s.staged(c), Force: s.r.Force, Reason: s.r.Reason, RecordedAt: s.RecordedAt})
			p.paths = append(p.paths, c.Path)
		}
		if !changed {
			continue
		}
		if fresh {
			// The new manifest lists every cassette of the directory.
			others, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
			if err != nil {
				return nil, err
			}
			for _, o := range others {
				if !staged[filepath.Base(o)] {
					p.updates = append(p.updates, cassettes.Update{File: filepath.Base(o), Staged: o, Reason: "listed as it is by refresh-cassettes"})
				}
			}
		}
		plans = append(plans, p)
	}
	if len(pinned) > 0 {
		return nil, fmt.Errorf("refresh: %w: %s changed, and a golden digest depends on each; refresh with Force and a Reason (refresh-cassettes -force -reason 'why'); nothing was changed in the module",
			manifest.ErrPinned, strings.Join(pinned, ", "))
	}
	var applied []string
	for _, p := range plans {
		if err := s.applyDir(p.dir, p.updates, at); err != nil {
			done := "nothing else was changed"
			if len(applied) > 0 {
				done = "already applied: " + strings.Join(applied, ", ")
			}
			return nil, fmt.Errorf("refresh: applying %s: %w\n%s", p.dir, err, done)
		}
		applied = append(applied, p.paths...)
	}
	slices.Sort(applied)
	return applied, nil
}

// applyDir copies the updates' cassettes into a staging folder of dir,
// made under dir's held lock, and applies them there.
func (s *Staged) applyDir(dir string, updates []cassettes.Update, at string) error {
	l := s.locks[dir]
	stage, err := l.NewStage()
	if err != nil {
		return err
	}
	for i, u := range updates {
		b, err := os.ReadFile(u.Staged)
		if err != nil {
			return err
		}
		dst := filepath.Join(stage, u.File)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		updates[i].Staged = dst
	}
	return cassettes.Apply(dir, updates, at)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
