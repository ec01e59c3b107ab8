package bundle

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// bundleFormat is the value of manifest.json's "format" field.
const bundleFormat = "codegenie-replay-bundle/2"

// File names inside a bundle.
const (
	manifestFile = "manifest.json"
	metadataFile = "metadata.json"
	runsFile     = "runs.json"
	snapshotFile = "snapshot.json"
	eventsFile   = "events.log"
	blobDir      = "blobs"
)

// Size bounds. A bundle exceeding one is rejected with errTooLarge.
const (
	// blobThreshold: payloads of at least this many bytes are stored in
	// blobs/ instead of inline in events.log (and only those).
	blobThreshold = 1024
	// maxRecord bounds one stored record in events.log.
	maxRecord = 1 << 20
	// maxString bounds a record's kind, lane and audit ID, a run's ID and
	// each pin name and value.
	maxString = 4096
	// maxBlob bounds one blob (a payload or a run's output).
	maxBlob = 64 << 20
	// maxJSON bounds manifest.json, metadata.json and runs.json.
	maxJSON = 16 << 20
	// maxSnapshot bounds snapshot.json.
	maxSnapshot = 64 << 20
	// maxFiles bounds the number of files a manifest lists, and so the
	// number of runs and blobs.
	maxFiles = 1 << 16
)

// logMagic starts events.log.
const logMagic = "CGRLOG2\n"

// Metadata is metadata.json: what the bundle is about, whatever its runs.
// The caller supplies every field; the package reads no environment
// (Config.Write and Config.WriteFile fill an empty GoVersion with
// runtime.Version()).
type Metadata struct {
	Scenario    string `json:"scenario"`
	ToolVersion string `json:"tool_version"`
	GoVersion   string `json:"go_version"`
}

// fields returns m's fields by their JSON names, for a diff.
func (m Metadata) fields() map[string]string {
	return map[string]string{"scenario": m.Scenario, "tool_version": m.ToolVersion, "go_version": m.GoVersion}
}

func (m Metadata) check() error {
	if m.Scenario == "" {
		return wrapf(errRequired, "scenario is empty")
	}
	return nil
}

// RunInfo is one run's entry in runs.json: everything about the run but
// its events and output bytes.
type RunInfo struct {
	ID    string            `json:"id"`
	Pin   map[string]string `json:"pin,omitempty"`
	Error string            `json:"error,omitempty"`
	// Events is the number of the run's records in events.log, Chain
	// their chain head (events.Chain of the events as stored).
	Events uint64        `json:"events"`
	Chain  events.Digest `json:"chain"`
	// Output is the blake3-256 of the run's output bytes, OutputSize
	// their length; a non-empty output is the blob named by Output.
	Output     events.Digest `json:"output"`
	OutputSize int64         `json:"output_size"`
}

// fileEntry is one file in the manifest.
type fileEntry struct {
	Path   string        `json:"path"`
	Size   int64         `json:"size"`
	Digest events.Digest `json:"digest"`
}

// bundleManifest is manifest.json.
type bundleManifest struct {
	Format string      `json:"format"`
	Files  []fileEntry `json:"files"` // sorted by Path; every file but manifest.json
	// Self is the blake3 of this manifest's canonical JSON with Self zero.
	Self events.Digest `json:"self"`
}

func (m *bundleManifest) file(name string) (fileEntry, bool) {
	i, ok := slices.BinarySearchFunc(m.Files, name, func(e fileEntry, n string) int { return strings.Compare(e.Path, n) })
	if !ok {
		return fileEntry{}, false
	}
	return m.Files[i], true
}

func (m bundleManifest) selfDigest() (events.Digest, error) {
	m.Self = events.Digest{}
	b, err := events.Canonical(m)
	if err != nil {
		return events.Digest{}, err
	}
	return events.Sum(b), nil
}

// encode returns the canonical bytes of m with Self filled in.
func (m *bundleManifest) encode() ([]byte, error) {
	d, err := m.selfDigest()
	if err != nil {
		return nil, err
	}
	m.Self = d
	return events.Canonical(m)
}

// Snapshot is snapshot.json: the state of one run after its first Records
// records, the last of which has seq At, as a fold (Folder) named
// Fold computes it; Chain is the run's chain head after those records.
type Snapshot struct {
	Run     string          `json:"run"`
	At      uint64          `json:"at"`
	Records uint64          `json:"records"`
	Chain   events.Digest   `json:"chain"`
	Fold    string          `json:"fold"`
	State   json.RawMessage `json:"state"`
}

// checkName accepts exactly the names a bundle may hold: the fixed files
// and blobs/<64 lowercase hex digits>.
func checkName(name string) error {
	switch name {
	case manifestFile, metadataFile, runsFile, snapshotFile, eventsFile:
		return nil
	}
	hexName, ok := strings.CutPrefix(name, blobDir+"/")
	if !ok || !isDigestHex(hexName) {
		return wrapf(errUnsafeName, "%q: a bundle holds only %s, %s, %s, %s, %s and %s/<64 lowercase hex digits>",
			name, manifestFile, metadataFile, runsFile, snapshotFile, eventsFile, blobDir)
	}
	return nil
}

func isDigestHex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func blobName(d events.Digest) string { return blobDir + "/" + hex.EncodeToString(d[:]) }

// blobDigest returns the digest a blobs/<hex> path names; ok is false for
// any other path.
func blobDigest(path string) (d events.Digest, ok bool) {
	name, ok := strings.CutPrefix(path, blobDir+"/")
	if !ok {
		return d, false
	}
	return d, d.UnmarshalText([]byte(name)) == nil
}

// strictUnmarshal decodes one JSON value, rejecting unknown fields and
// trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return wrapf(errMalformed, "%v", err)
	}
	if dec.More() {
		return wrapf(errMalformed, "trailing data after the JSON value")
	}
	return nil
}

// checkCanonical requires b to be exactly the canonical encoding of v.
func checkCanonical(b []byte, v any) error {
	c, err := events.Canonical(v)
	if err != nil {
		return wrapf(errMalformed, "%v", err)
	}
	if !bytes.Equal(b, c) {
		return wrapf(errMalformed, "not in canonical form (the bundle writer never produces this: the file was edited)")
	}
	return nil
}

// decodeJSON is strictUnmarshal followed by checkCanonical: the one way a
// bundle's JSON files are read.
func decodeJSON(b []byte, v any) error {
	if err := strictUnmarshal(b, v); err != nil {
		return err
	}
	return checkCanonical(b, v)
}

// checkString bounds a string of a run or pin.
func checkString(what, s string) error {
	switch {
	case s == "":
		return wrapf(errRequired, "%s is empty", what)
	case len(s) > maxString:
		return wrapf(errTooLarge, "%s of %d bytes, at most %d", what, len(s), maxString)
	}
	return nil
}

// checkRunInfos checks runs.json's entries: IDs unique, sorted and
// bounded, pins bounded, sizes not negative.
func checkRunInfos(runs []RunInfo) error {
	if len(runs) > maxFiles {
		return wrapf(errTooLarge, "%d runs, at most %d", len(runs), maxFiles)
	}
	for i, r := range runs {
		if err := checkString(fmt.Sprintf("runs[%d].id", i), r.ID); err != nil {
			return err
		}
		if strings.ContainsRune(r.ID, ',') || excerpt.Quote(r.ID) != r.ID {
			return wrapf(errMalformed, "runs[%d].id %s: an ID holds printable characters other than a comma, a backslash or a double quote", i, excerpt.Quote(r.ID))
		}
		if i > 0 && runs[i-1].ID >= r.ID {
			return wrapf(errMalformed, "runs[%d] %q is not sorted after %q or is a duplicate", i, r.ID, runs[i-1].ID)
		}
		for _, k := range slices.Sorted(maps.Keys(r.Pin)) {
			v := r.Pin[k]
			if err := checkString(fmt.Sprintf("run %q: pin name", r.ID), k); err != nil {
				return err
			}
			if len(v) > maxString {
				return wrapf(errTooLarge, "run %q: pin %q of %d bytes, at most %d", r.ID, k, len(v), maxString)
			}
		}
		if r.OutputSize < 0 || r.OutputSize > maxBlob {
			return wrapf(errMalformed, "run %q: output size %d is not in [0, %d]", r.ID, r.OutputSize, maxBlob)
		}
		if (r.OutputSize == 0) != (r.Output == emptyDigest) {
			return wrapf(errDigest, "run %q: output digest %s does not fit an output of %d bytes", r.ID, r.Output, r.OutputSize)
		}
	}
	return nil
}

// emptyDigest is the digest of no bytes: the digest of an empty payload
// or output. A stored record with an empty payload and any other digest
// refers to blobs/<digest>.
var emptyDigest = events.Sum(nil)
