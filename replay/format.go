package replay

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/events"
)

// Format is the value of manifest.json's "format" field.
const Format = "codegenie-replay-bundle/1"

// File names inside a bundle.
const (
	ManifestFile = "manifest.json"
	MetadataFile = "metadata.json"
	SnapshotFile = "snapshot.json"
	EventsFile   = "events.log"
	BlobDir      = "blobs"
)

// Size bounds. A bundle exceeding one is rejected with ErrTooLarge.
const (
	// BlobThreshold: Write stores payloads of at least this many bytes in
	// blobs/ instead of inline in events.log.
	BlobThreshold = 1024
	// MaxRecord bounds one stored record in events.log.
	MaxRecord = 1 << 20
	// MaxString bounds the kind, lane, audit and budget strings of a record.
	MaxString = 4096
	// MaxBlob bounds one blob.
	MaxBlob = 64 << 20
	// MaxJSON bounds metadata.json and manifest.json.
	MaxJSON = 16 << 20
	// MaxSnapshot bounds snapshot.json.
	MaxSnapshot = 64 << 20
	// MaxFiles bounds the number of files a manifest lists.
	MaxFiles = 1 << 16
)

// logMagic starts events.log.
const logMagic = "CGRLOG1\n"

// Status says whether a run was captured.
type Status string

// The statuses. Only a CAPTURED bundle is a complete run; a PENDING bundle
// holds what was captured so far and verifies like a captured one; a FAILED
// bundle cannot be replayed (ErrReplayUnavailable).
const (
	StatusPending  Status = "PENDING"
	StatusCaptured Status = "CAPTURED"
	StatusFailed   Status = "FAILED"
)

// Pin is what a run's outcome depends on: its RunKey and the four-tuple.
type Pin struct {
	RunKey               string `json:"run_key"`
	CassetteID           string `json:"cassette_id"`
	StoreDigest          string `json:"store_digest"`
	RepoSnapshotSHA      string `json:"repo_snapshot_sha"`
	EmbeddingModelDigest string `json:"embedding_model_digest"`
}

// Metadata is metadata.json. The caller supplies every field; the package
// reads no environment (WriteRun fills an empty GoVersion with
// runtime.Version()).
type Metadata struct {
	Pin         Pin    `json:"pin"`
	Scenario    string `json:"scenario"`
	Run         string `json:"run,omitempty"` // label of the run in its scenario, e.g. "iteration-07"
	GoVersion   string `json:"go_version"`
	ToolVersion string `json:"tool_version"`
	Status      Status `json:"status"`
	Error       string `json:"error,omitempty"` // why the run FAILED
}

func (m Metadata) check() error {
	switch m.Status {
	case StatusPending, StatusCaptured, StatusFailed:
	default:
		return wrapf(ErrRequired, "status %q is not PENDING, CAPTURED or FAILED", m.Status)
	}
	if m.Status == StatusFailed {
		return nil
	}
	if m.Pin.RunKey == "" {
		return wrapf(ErrRequired, "pin.run_key is empty")
	}
	if m.Scenario == "" {
		return wrapf(ErrRequired, "scenario is empty")
	}
	return nil
}

// FileEntry is one file in the manifest.
type FileEntry struct {
	Path   string        `json:"path"`
	Size   int64         `json:"size"`
	Digest events.Digest `json:"digest"`
}

// Manifest is manifest.json.
type Manifest struct {
	Format string      `json:"format"`
	Files  []FileEntry `json:"files"` // sorted by Path; every file but manifest.json
	// Events is the number of records in events.log.
	Events uint64 `json:"events"`
	// Chain is the chain head of the events exactly as stored
	// (events.Chain).
	Chain events.Digest `json:"chain"`
	// Self is the blake3 of this manifest's canonical JSON with Self zero.
	Self events.Digest `json:"self"`
}

func (m *Manifest) file(name string) (FileEntry, bool) {
	i, ok := slices.BinarySearchFunc(m.Files, name, func(e FileEntry, n string) int { return strings.Compare(e.Path, n) })
	if !ok {
		return FileEntry{}, false
	}
	return m.Files[i], true
}

func (m Manifest) selfDigest() (events.Digest, error) {
	m.Self = events.Digest{}
	b, err := events.Canonical(m)
	if err != nil {
		return events.Digest{}, err
	}
	return events.Sum(b), nil
}

// encode returns the canonical bytes of m with Self filled in.
func (m *Manifest) encode() ([]byte, error) {
	d, err := m.selfDigest()
	if err != nil {
		return nil, err
	}
	m.Self = d
	return events.Canonical(m)
}

// parseManifest decodes and checks manifest.json: canonical bytes, format,
// self digest, file names sorted, unique and allowed.
func parseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := strictUnmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.Format != Format {
		return nil, wrapf(ErrMalformed, "format %q, want %q", m.Format, Format)
	}
	if len(m.Files) > MaxFiles {
		return nil, wrapf(ErrTooLarge, "%d files listed, at most %d", len(m.Files), MaxFiles)
	}
	want, err := m.selfDigest()
	if err != nil {
		return nil, wrapf(ErrMalformed, "%v", err)
	}
	if want != m.Self {
		return nil, wrapf(ErrDigest, "self digest %s does not match the manifest's content (%s): the manifest was edited", m.Self, want)
	}
	if err := checkCanonical(b, m); err != nil {
		return nil, err
	}
	for i, f := range m.Files {
		if err := checkName(f.Path); err != nil {
			return nil, fmt.Errorf("files[%d]: %w", i, err)
		}
		if f.Path == ManifestFile {
			return nil, wrapf(ErrUnsafeName, "files[%d]: the manifest lists itself", i)
		}
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return nil, wrapf(ErrMalformed, "files[%d] %q is not sorted after %q or is a duplicate", i, f.Path, m.Files[i-1].Path)
		}
		if f.Size < 0 {
			return nil, wrapf(ErrMalformed, "files[%d] %q: negative size", i, f.Path)
		}
		if d, ok := blobDigest(f.Path); ok && d != f.Digest {
			return nil, wrapf(ErrDigest, "files[%d] %q: digest %s, but a blob is named by the digest of its bytes", i, f.Path, f.Digest)
		}
	}
	if _, ok := m.file(MetadataFile); !ok {
		return nil, wrapf(ErrMissing, "the manifest does not list %s", MetadataFile)
	}
	if _, ok := m.file(EventsFile); !ok {
		return nil, wrapf(ErrMissing, "the manifest does not list %s", EventsFile)
	}
	return &m, nil
}

// checkName accepts exactly the names a bundle may hold: the fixed files
// and blobs/<64 lowercase hex digits>.
func checkName(name string) error {
	switch name {
	case ManifestFile, MetadataFile, SnapshotFile, EventsFile:
		return nil
	}
	hexName, ok := strings.CutPrefix(name, BlobDir+"/")
	if !ok || !isDigestHex(hexName) {
		return wrapf(ErrUnsafeName, "%q: a bundle holds only %s, %s, %s, %s and %s/<64 lowercase hex digits>", name, ManifestFile, MetadataFile, SnapshotFile, EventsFile, BlobDir)
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

func blobName(d events.Digest) string { return BlobDir + "/" + hex.EncodeToString(d[:]) }

// blobDigest returns the digest a blobs/<hex> path names; ok is false for
// any other path.
func blobDigest(path string) (d events.Digest, ok bool) {
	name, ok := strings.CutPrefix(path, BlobDir+"/")
	if !ok {
		return d, false
	}
	d, err := events.ParseDigest(name)
	return d, err == nil
}

// strictUnmarshal decodes one JSON value, rejecting unknown fields and
// trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return wrapf(ErrMalformed, "%v", err)
	}
	if dec.More() {
		return wrapf(ErrMalformed, "trailing data after the JSON value")
	}
	return nil
}

// checkCanonical requires b to be exactly the canonical encoding of v.
func checkCanonical(b []byte, v any) error {
	c, err := events.Canonical(v)
	if err != nil {
		return wrapf(ErrMalformed, "%v", err)
	}
	if !bytes.Equal(b, c) {
		return wrapf(ErrMalformed, "not in canonical form (the bundle writer never produces this: the file was edited)")
	}
	return nil
}

// Snapshot is snapshot.json: the state after every event with Seq <= At.
type Snapshot struct {
	At uint64 `json:"at"`
	// Records is the number of records the state covers.
	Records uint64 `json:"records"`
	// Chain is the chain head after those records.
	Chain events.Digest `json:"chain"`
	State State         `json:"state"`
}
