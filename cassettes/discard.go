package cassettes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/manifest"
)

// undo is what a saved recording replaced, so that Discard can put it
// back: the cassette file before (nil: none), and for a recording applied
// to a manifest the manifest before; and the digests of what the save
// wrote, to refuse when someone changed either since.
type undo struct {
	path                 string // where the recording was saved
	staged               bool   // in a refresh's staging directory
	cassette, manifest   *fileBytes
	wrote, wroteManifest events.Digest
}

type fileBytes struct{ data []byte }

// previous returns the bytes of the regular file at path, or nil.
func previous(path string) *fileBytes {
	b, err := readRegular(path)
	if err != nil {
		return nil
	}
	return &fileBytes{data: b}
}

// Discard puts back what Close saved in Record mode: the cassette file as
// it was before the recording (or no file), and, when the recording was
// applied to the directory's manifest, the manifest as it was (its
// history without the recording's entry). A determinism gate discards a
// recording whose replay gate did not pass. It holds the directory's
// refresh lock, and refuses, changing nothing, when the cassette or the
// manifest changed since Close saved them. It does nothing for a cassette
// opened in Replay mode, or a recording Close did not save.
func (c *Cassette) Discard() error {
	if c.rec == nil {
		return nil
	}
	c.mu.Lock()
	u := c.rec.undo
	c.rec.undo = nil
	c.mu.Unlock()
	if u == nil {
		return nil
	}
	changed := func(path string, want events.Digest) error {
		cur := previous(path)
		if cur != nil && events.Sum(cur.data) == want {
			return nil
		}
		return newErr(path, 0, "discard", fmt.Errorf("not discarding the recording: %s changed since the recording saved it; nothing was changed", path))
	}
	if u.staged {
		// A refresh's staging directory has no lock and no manifest.
		if err := changed(u.path, u.wrote); err != nil {
			return err
		}
		if u.cassette == nil {
			return removeRecorded(u.path)
		}
		return writeFileAtomic(u.path, u.cassette.data, nil)
	}
	dir, file := filepath.Dir(c.path), filepath.Base(c.path)
	l, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if err := changed(c.path, u.wrote); err != nil {
		return err
	}
	if u.manifest == nil {
		if u.cassette == nil {
			return removeRecorded(c.path)
		}
		return writeFileAtomic(c.path, u.cassette.data, nil)
	}
	mpath := filepath.Join(dir, manifest.Name)
	if err := changed(mpath, u.wroteManifest); err != nil {
		return err
	}
	if u.cassette == nil {
		// The manifest first: a process killed between the two leaves a
		// cassette no entry lists, which Verify names.
		if err := writeFileAtomic(mpath, u.manifest.data, nil); err != nil {
			return err
		}
		return removeRecorded(c.path)
	}
	// Both back at once, as Apply moves files: through a journal.
	stage, err := l.NewStage()
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(stage, file), u.cassette.data, nil); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(stage, stagedManName), u.manifest.data, nil); err != nil {
		return err
	}
	j := journal{Format: journalFormat, Moves: []journalEntry{
		{Staged: file, File: file, Sum: events.Sum(u.cassette.data).String()},
		{Staged: stagedManName, File: manifest.Name, Sum: events.Sum(u.manifest.data).String()},
	}}
	j.Check = j.checksum()
	jb, err := json.Marshal(j)
	if err != nil {
		return newErr(stage, 0, "write", err)
	}
	if err := writeFileAtomic(filepath.Join(stage, journalName), jb, nil); err != nil {
		return err
	}
	if made, err := rollForward(dir, stage, &j); err != nil {
		noteFailure(stage, err)
		releaseStage(stage)
		return partialError(dir, stage, &j, made, err)
	}
	removeStage(stage)
	return nil
}

func removeRecorded(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return newErr(path, 0, "discard", err)
	}
	return nil
}
