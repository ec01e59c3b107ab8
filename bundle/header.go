package bundle

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/codegenie/codegenie/events"
)

// header holds what a reader checks before events.log: the manifest, the
// metadata, the runs and the snapshot.
type header struct {
	manifest  *bundleManifest
	manifestB []byte
	meta      Metadata
	runs      []RunInfo
	snap      *Snapshot
	snapRun   int // index of the snapshot's run in runs
}

// formatPrefix starts every version of the bundle format.
const formatPrefix = "codegenie-replay-bundle/"

// parseManifest decodes and checks manifest.json: format, canonical bytes,
// self digest, file names sorted, unique and allowed, the fixed files
// present.
func parseManifest(b []byte) (*bundleManifest, error) {
	var probe struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(b, &probe) == nil && probe.Format != bundleFormat && strings.HasPrefix(probe.Format, formatPrefix) {
		return nil, wrapf(errVersion, "the bundle is %s, and this version reads %s: write the bundle again with this version (run again what made it), or read it with the codegenie version that wrote it", probe.Format, bundleFormat)
	}
	var m bundleManifest
	if err := strictUnmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.Format != bundleFormat {
		return nil, wrapf(errMalformed, "format %q, want %q", m.Format, bundleFormat)
	}
	if len(m.Files) > maxFiles {
		return nil, wrapf(errTooLarge, "%d files listed, at most %d", len(m.Files), maxFiles)
	}
	want, err := m.selfDigest()
	if err != nil {
		return nil, wrapf(errMalformed, "%v", err)
	}
	if want != m.Self {
		return nil, wrapf(errDigest, "self digest %s does not match the manifest's content (%s): the manifest was edited", m.Self, want)
	}
	if err := checkCanonical(b, m); err != nil {
		return nil, err
	}
	for i, f := range m.Files {
		if err := checkName(f.Path); err != nil {
			return nil, fmt.Errorf("files[%d]: %w", i, err)
		}
		switch {
		case f.Path == manifestFile:
			return nil, wrapf(errUnsafeName, "files[%d]: the manifest lists itself", i)
		case i > 0 && m.Files[i-1].Path >= f.Path:
			return nil, wrapf(errMalformed, "files[%d] %q is not sorted after %q or is a duplicate", i, f.Path, m.Files[i-1].Path)
		case f.Size < 0:
			return nil, wrapf(errMalformed, "files[%d] %q: negative size", i, f.Path)
		}
		if d, ok := blobDigest(f.Path); ok && d != f.Digest {
			return nil, wrapf(errDigest, "files[%d] %q: digest %s, but a blob is named by the digest of its bytes", i, f.Path, f.Digest)
		}
	}
	for _, name := range []string{metadataFile, runsFile, eventsFile} {
		if _, ok := m.file(name); !ok {
			return nil, wrapf(errMissing, "the manifest does not list %s", name)
		}
	}
	return &m, nil
}

// checkEntry checks b against the manifest's entry for name.
func (h *header) checkEntry(name string, b []byte) error {
	e, ok := h.manifest.file(name)
	if !ok {
		return wrapf(errUnsafeName, "present in the bundle but not listed in the manifest")
	}
	if int64(len(b)) != e.Size {
		return wrapf(errDigest, "size %d, the manifest says %d", len(b), e.Size)
	}
	if d := events.Sum(b); d != e.Digest {
		return wrapf(errDigest, "digest %s, the manifest says %s", d, e.Digest)
	}
	return nil
}

func (h *header) setManifest(b []byte) error {
	m, err := parseManifest(b)
	if err != nil {
		return err
	}
	h.manifest, h.manifestB = m, b
	return nil
}

func (h *header) setMetadata(b []byte) error {
	if err := h.checkEntry(metadataFile, b); err != nil {
		return err
	}
	if err := decodeJSON(b, &h.meta); err != nil {
		return err
	}
	return h.meta.check()
}

// setRuns checks runs.json: its entries, and that every non-empty output
// is a blob the manifest lists with the output's size.
func (h *header) setRuns(b []byte) error {
	if err := h.checkEntry(runsFile, b); err != nil {
		return err
	}
	if err := decodeJSON(b, &h.runs); err != nil {
		return err
	}
	if err := checkRunInfos(h.runs); err != nil {
		return err
	}
	for _, r := range h.runs {
		if r.OutputSize == 0 {
			continue
		}
		f, ok := h.manifest.file(blobName(r.Output))
		if !ok || f.Size != r.OutputSize {
			return wrapf(errMissing, "run %q: its output %s (%d bytes) is not a blob of the bundle", r.ID, blobName(r.Output), r.OutputSize)
		}
	}
	return nil
}

// setSnapshot checks snapshot.json against runs.json: the run it names and
// the number of records it covers (the records themselves are checked as
// the log is read, the state by a fold: FoldTo).
func (h *header) setSnapshot(b []byte) error {
	if err := h.checkEntry(snapshotFile, b); err != nil {
		return err
	}
	var s Snapshot
	if err := decodeJSON(b, &s); err != nil {
		return err
	}
	h.snapRun = -1
	for i, r := range h.runs {
		if r.ID == s.Run {
			h.snapRun = i
		}
	}
	switch {
	case h.snapRun < 0:
		return wrapf(errMissing, "the snapshot is of run %q, which runs.json does not list", s.Run)
	case s.At == 0 || s.Records == 0 || s.Records > h.runs[h.snapRun].Events:
		return wrapf(errMalformed, "a snapshot at seq %d covering %d records does not fit run %q of %d records", s.At, s.Records, s.Run, h.runs[h.snapRun].Events)
	case s.Fold == "":
		return wrapf(errRequired, "the snapshot does not name its fold")
	}
	h.snap = &s
	return nil
}
