package cassettes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/manifest"
)

// journalFormat is the journal format this package writes and recovers.
const journalFormat = 2

// maxJournalBytes bounds the journals Recover reads.
const maxJournalBytes = 1 << 20

// journal is what Apply decided, written before it changes anything in
// the directory: every file it moves in, with the digest it must have.
type journal struct {
	Format int            `json:"format"`
	Moves  []journalEntry `json:"moves"` // cassettes first, the manifest last
	Check  string         `json:"check"` // see checksum
}

type journalEntry struct {
	Staged string `json:"staged"` // name in the staging folder
	File   string `json:"file"`   // name in the directory
	Sum    string `json:"sum"`    // blake3 of the file's bytes
}

// checksum is the hex blake3-256 of a fixed tag and the canonical JSON of
// the format and the moves: a journal whose check differs was not
// written whole by Apply.
func (j *journal) checksum() string {
	b, err := events.Canonical(struct {
		Format int
		Moves  []journalEntry
	}{j.Format, j.Moves})
	if err != nil {
		// Unreachable: integers and strings always encode.
		panic("cassettes: journal encoding: " + err.Error())
	}
	return events.Sum(append([]byte("codegenie cassettes journal\n"), b...)).String()
}

// refuse is the error for a journal or staging folder this package did not
// write: nothing in dir was moved.
func refuse(path, stage, dir, format string, args ...any) error {
	return newErr(path, 0, "recover", detailf(ErrInterruptedApply,
		"%v: %s; a refresh never writes that, so nothing was moved into %s: look at what %s holds, then remove it",
		ErrInterruptedApply, fmt.Sprintf(format, args...), dir, stage))
}

// checkMoves checks every name of j before any file is touched: each
// cassette move names a staged cassette and a cassette of dir by plain
// name, once; the last moves the staged manifest onto the manifest.
func checkMoves(jpath, stage, dir string, j *journal) error {
	n := len(j.Moves)
	if n < 2 {
		return refuse(jpath, stage, dir, "the journal lists %d moves, not cassettes and then the manifest", n)
	}
	seen := map[string]bool{}
	for i, mv := range j.Moves {
		if err := new(events.Digest).UnmarshalText([]byte(mv.Sum)); err != nil {
			return refuse(jpath, stage, dir, "entry %d (%q -> %q) has sum %q: %v", i, mv.Staged, mv.File, mv.Sum, err)
		}
		if i == n-1 {
			if mv.Staged != stagedManName || mv.File != manifest.Name {
				return refuse(jpath, stage, dir, "its last entry moves %q to %q, not %s to %s", mv.Staged, mv.File, stagedManName, manifest.Name)
			}
			continue
		}
		if !manifest.IsCassetteName(mv.Staged) {
			return refuse(jpath, stage, dir, "entry %d names %q as its staged file, which is not a cassette file name (a plain name ending in .yaml)", i, mv.Staged)
		}
		if !manifest.IsCassetteName(mv.File) {
			return refuse(jpath, stage, dir, "entry %d moves %q to %q, which is not a cassette file name (a plain name ending in .yaml)", i, mv.Staged, mv.File)
		}
		if seen["s"+mv.Staged] || seen["f"+mv.File] {
			return refuse(jpath, stage, dir, "entry %d (%q -> %q) repeats a name", i, mv.Staged, mv.File)
		}
		seen["s"+mv.Staged], seen["f"+mv.File] = true, true
	}
	return nil
}

// readJournal reads and checks the journal of stage, a staging folder of
// dir: a regular file, one JSON object of the current format whose check
// holds and whose names all pass checkMoves.
func readJournal(dir, stage string) (*journal, error) {
	jpath := filepath.Join(stage, journalName)
	fi, err := os.Lstat(jpath)
	if err != nil {
		return nil, newErr(jpath, 0, "recover", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, refuse(jpath, stage, dir, "the journal is not a regular file")
	}
	raw, err := readBounded(jpath, maxJournalBytes)
	if err != nil {
		return nil, refuse(jpath, stage, dir, "the journal cannot be read (%v)", err)
	}
	var j journal
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil || dec.More() {
		return nil, refuse(jpath, stage, dir, "the journal is not one JSON object of the journal format (%v)", err)
	}
	if j.Format != journalFormat {
		return nil, refuse(jpath, stage, dir, "the journal has format %d; this version writes and recovers format %d", j.Format, journalFormat)
	}
	if j.Check != j.checksum() {
		return nil, refuse(jpath, stage, dir, "the journal's check %q is not the one its content gives", j.Check)
	}
	if err := checkMoves(jpath, stage, dir, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// move is one journalled move, checked: whether it was already made.
type move struct {
	src, dst string
	done     bool
}

// checkStaged proves that j moves into dir only what Apply would have:
// before anything is moved, each staged file (or, if already moved, the
// file in dir) is a regular file with its journalled digest; each
// cassette parses and holds no secret; the manifest parses, and lists
// every moved cassette with its digest.
func checkStaged(dir, stage string, j *journal) ([]move, error) {
	jpath := filepath.Join(stage, journalName)
	var moves []move
	type staged struct{ file, digest string }
	var cassettes []staged
	for i, mv := range j.Moves {
		m := move{src: filepath.Join(stage, mv.Staged), dst: filepath.Join(dir, mv.File)}
		path := m.src
		if _, err := os.Lstat(m.src); errors.Is(err, fs.ErrNotExist) {
			m.done, path = true, m.dst
		}
		raw, err := readRegular(path)
		if err != nil || events.Sum(raw).String() != mv.Sum {
			if m.done {
				return nil, newErr(m.dst, 0, "recover", detailf(ErrInterruptedApply,
					"%v: the journal in %s moves %s here, but neither the staged file nor a file with its digest exists; restore %s from version control and re-record",
					ErrInterruptedApply, stage, mv.Staged, dir))
			}
			if err == nil {
				err = fmt.Errorf("its digest is %s", events.Sum(raw))
			}
			return nil, refuse(jpath, stage, dir, "entry %d: the staged file %s is not the one journalled (sum %s): %v", i, mv.Staged, mv.Sum, err)
		}
		if i == len(j.Moves)-1 {
			man, err := manifest.Parse(path, raw)
			if err != nil {
				return nil, refuse(jpath, stage, dir, "the staged manifest does not read as one: %v", err)
			}
			for _, c := range cassettes {
				if e, ok := man.Lookup(c.file); !ok || e.Digest != c.digest {
					return nil, refuse(jpath, stage, dir, "the staged manifest does not list %s with the digest of its staged cassette", c.file)
				}
			}
		} else {
			p, err := parseCassette(path, raw, "")
			if err != nil {
				return nil, refuse(jpath, stage, dir, "entry %d: the staged cassette %s does not read as one: %v", i, mv.Staged, err)
			}
			if err := secretError(p, "recover", "", "", true); err != nil {
				return nil, err
			}
			cassettes = append(cassettes, staged{mv.File, p.digest.String()})
		}
		moves = append(moves, m)
	}
	return moves, nil
}

// readRegular reads path, which must be a regular file (not a link) of at
// most maxCassetteBytes.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return readBounded(path, maxCassetteBytes)
}

// applyStep is a test seam called between the moves of an apply.
var applyStep = func() {}

// rollForward checks j (checkStaged), moves every staged file not yet
// moved into dir, then removes the journal: the apply is complete. It
// returns the moves it made, for a report of what changed if it fails
// part-way. The caller removes the staging folder.
func rollForward(dir, stage string, j *journal) (made []string, err error) {
	moves, err := checkStaged(dir, stage, j)
	if err != nil {
		return nil, err
	}
	for _, m := range moves {
		applyStep()
		if m.done {
			continue
		}
		if err := os.Rename(m.src, m.dst); err != nil {
			return made, newErr(m.dst, 0, "write", err)
		}
		made = append(made, filepath.Base(m.dst))
	}
	syncDir(dir)
	applyStep()
	if err := os.Remove(filepath.Join(stage, journalName)); err != nil {
		return made, newErr(stage, 0, "write", err)
	}
	return made, nil
}
