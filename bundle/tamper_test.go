package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/events"
)

// logFrames splits events.log into its header, frames and trailer.
func logFrames(t testing.TB, b []byte) (header []byte, frames [][]byte, trailer []byte) {
	t.Helper()
	header, off := b[:len(logMagic)], len(logMagic)
	for {
		n, k := binary.Uvarint(b[off:])
		require.Positive(t, k)
		if n == 0 {
			return header, frames, b[off:]
		}
		end := off + k + int(n) + 32
		frames = append(frames, b[off:end:end])
		off = end
	}
}

func joinLog(header []byte, frames [][]byte, trailer []byte) []byte {
	out := bytes.Clone(header)
	for _, f := range frames {
		out = append(out, f...)
	}
	return append(out, trailer...)
}

// editDir copies the directory bundle and applies edit to it.
func editDir(t testing.TB, src string, edit func(dir string)) string {
	t.Helper()
	dst := copyDir(t, src)
	edit(dst)
	return dst
}

func rewriteLog(t testing.TB, dir string, f func(h []byte, fr [][]byte, tr []byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, eventsFile)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, f(logFrames(t, b)), 0o644))
}

// rewriteManifest applies f to the manifest and re-seals it (self digest),
// as a careful forger would.
func rewriteManifest(t testing.TB, dir string, f func(*bundleManifest)) {
	t.Helper()
	p := filepath.Join(dir, manifestFile)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	m, err := parseManifest(b)
	require.NoError(t, err)
	f(m)
	nb, err := m.encode()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, nb, 0o644))
}

// rewriteTar rewrites a single-file bundle's entries through f (which may
// rename, change or drop them) and appends extra entries after the first.
func rewriteTar(t testing.TB, src string, f func(name string, data []byte) (string, []byte)) string {
	t.Helper()
	raw, err := os.Open(src)
	require.NoError(t, err)
	defer raw.Close()
	zr, err := newZstdReader(raw)
	require.NoError(t, err)
	defer zr.Close()
	tr := tar.NewReader(zr)
	dst := filepath.Join(t.TempDir(), "edited"+FileExt)
	out, err := os.Create(dst)
	require.NoError(t, err)
	defer out.Close()
	zw, err := newZstdWriter(out)
	require.NoError(t, err)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		name, data := f(h.Name, data)
		if name == "" {
			continue
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o644, ModTime: time.Unix(0, 0)}))
		_, err = tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return dst
}

func TestTamper(t *testing.T) {
	evs := realisticRun(t, 0)
	dir, file := writeBoth(t, single(evs))
	var blob events.Digest
	blobRecord := -1
	for i, e := range evs {
		if len(e.Payload) >= blobThreshold {
			blob, blobRecord = e.PayloadDigest, i
			break
		}
	}
	require.GreaterOrEqual(t, blobRecord, 0)
	flip := func(b []byte, i int) []byte { b = bytes.Clone(b); b[i] ^= 0x01; return b }

	for _, tc := range []struct {
		name   string
		bundle func(t *testing.T) string
		want   error
		file   string
		record int
	}{
		{
			name: "flip a blob byte",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					p := filepath.Join(d, filepath.FromSlash(blobName(blob)))
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(p, flip(b, len(b)/2), 0o644))
				})
			},
			want: errDigest, file: blobName(blob), record: blobRecord,
		},
		{
			name: "flip a blob byte in the single file",
			bundle: func(t *testing.T) string {
				return rewriteTar(t, file, func(n string, b []byte) (string, []byte) {
					if n == blobName(blob) {
						b = flip(b, 3)
					}
					return n, b
				})
			},
			want: errDigest, file: blobName(blob), record: -1,
		},
		{
			// A careful forger: the blob's bytes replaced, its manifest
			// entry set to their digest and the manifest re-sealed. The
			// blob's name no longer is its digest.
			name: "replace a blob and re-seal the manifest in the single file",
			bundle: func(t *testing.T) string {
				forged := flip(evs[blobRecord].Payload, 3)
				return rewriteTar(t, file, func(n string, b []byte) (string, []byte) {
					switch n {
					case manifestFile:
						m, err := parseManifest(b)
						require.NoError(t, err)
						for i := range m.Files {
							if m.Files[i].Path == blobName(blob) {
								m.Files[i].Digest = events.Sum(forged)
							}
						}
						nb, err := m.encode()
						require.NoError(t, err)
						return n, nb
					case blobName(blob):
						return n, forged
					}
					return n, b
				})
			},
			want: errDigest, file: manifestFile, record: -1,
		},
		{
			name: "edit an event's payload",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteLog(t, d, func(h []byte, fr [][]byte, tr []byte) []byte {
						fr[2] = flip(fr[2], len(fr[2])/2) // inside record 2's payload
						return joinLog(h, fr, tr)
					})
				})
			},
			want: errDigest, file: eventsFile, record: 2,
		},
		{
			name: "edit an event's kind",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteLog(t, d, func(h []byte, fr [][]byte, tr []byte) []byte {
						fr[3] = flip(fr[3], 6) // a byte of the kind string
						return joinLog(h, fr, tr)
					})
				})
			},
			want: errChain, file: eventsFile, record: 3,
		},
		{
			name: "reorder two events",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteLog(t, d, func(h []byte, fr [][]byte, tr []byte) []byte {
						fr[4], fr[5] = fr[5], fr[4]
						return joinLog(h, fr, tr)
					})
				})
			},
			want: errOrder, file: eventsFile, record: 4,
		},
		{
			name: "drop an event",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteLog(t, d, func(h []byte, fr [][]byte, tr []byte) []byte {
						return joinLog(h, append(fr[:1:1], fr[2:]...), tr)
					})
				})
			},
			want: errOrder, file: eventsFile, record: 1,
		},
		{
			name: "drop the last event",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteLog(t, d, func(h []byte, fr [][]byte, tr []byte) []byte {
						return joinLog(h, fr[:len(fr)-1], tr)
					})
				})
			},
			want: errTruncated, file: eventsFile, record: len(evs) - 1,
		},
		{
			name: "edit the manifest",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					p := filepath.Join(d, manifestFile)
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					b = bytes.Replace(b, []byte(`"path":"runs.json","size":`), []byte(`"path":"runs.json","size":1`), 1)
					require.NoError(t, os.WriteFile(p, b, 0o644))
				})
			},
			want: errDigest, file: manifestFile, record: -1,
		},
		{
			name: "edit the manifest and re-seal it",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteManifest(t, d, func(m *bundleManifest) {
						for i := range m.Files {
							if m.Files[i].Path == metadataFile {
								m.Files[i].Digest[0] ^= 1
							}
						}
					})
				})
			},
			want: errDigest, file: metadataFile, record: -1,
		},
		{
			name: "edit the metadata",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					p := filepath.Join(d, metadataFile)
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte("lodash"), []byte("LODASH"), 1), 0o644))
				})
			},
			want: errDigest, file: metadataFile, record: -1,
		},
		{
			name: "edit runs.json",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					p := filepath.Join(d, runsFile)
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte(`"events":8`), []byte(`"events":7`), 1), 0o644))
				})
			},
			want: errDigest, file: runsFile, record: -1,
		},
		{
			// A careful forger: runs.json claims another chain and the
			// manifest is re-sealed; the log's records do not agree.
			name: "forge a run's chain in runs.json and re-seal",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					p := filepath.Join(d, runsFile)
					var runs []RunInfo
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					require.NoError(t, json.Unmarshal(b, &runs))
					runs[0].Chain[0] ^= 1
					nb, err := events.Canonical(runs)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(p, nb, 0o644))
					rewriteManifest(t, d, func(m *bundleManifest) {
						for i := range m.Files {
							if m.Files[i].Path == runsFile {
								m.Files[i].Size, m.Files[i].Digest = int64(len(nb)), events.Sum(nb)
							}
						}
					})
				})
			},
			want: errChain, file: runsFile, record: -1,
		},
		{
			name: "output blob missing",
			bundle: func(t *testing.T) string {
				out := events.Sum(single(evs).Runs[0].Output)
				return editDir(t, dir, func(d string) {
					require.NoError(t, os.Remove(filepath.Join(d, filepath.FromSlash(blobName(out)))))
				})
			},
			want: errMissing, record: -1,
		},
		{
			name: "blob name with ../ in the manifest",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteManifest(t, d, func(m *bundleManifest) {
						m.Files = append([]fileEntry{{Path: "blobs/../../etc/passwd", Size: 1}}, m.Files...)
					})
				})
			},
			want: errUnsafeName, file: manifestFile, record: -1,
		},
		{
			name: "blob name with ../ in the single file",
			bundle: func(t *testing.T) string {
				return rewriteTar(t, file, func(n string, b []byte) (string, []byte) {
					if n == blobName(blob) {
						n = blobDir + "/../" + metadataFile
					}
					return n, b
				})
			},
			want: errUnsafeName, file: blobDir + "/../" + metadataFile, record: -1,
		},
		{
			name: "unlisted file",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					require.NoError(t, os.WriteFile(filepath.Join(d, blobDir, events.Sum(nil).String()), nil, 0o644))
				})
			},
			want: errUnsafeName, file: blobName(events.Sum(nil)), record: -1,
		},
		{
			name: "blob is a symlink",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					p := filepath.Join(d, filepath.FromSlash(blobName(blob)))
					target := filepath.Join(t.TempDir(), "target")
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(target, b, 0o644))
					require.NoError(t, os.Remove(p))
					require.NoError(t, os.Symlink(target, p))
				})
			},
			want: errUnsafeName, file: blobName(blob), record: -1,
		},
		{
			name: "blob missing",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					require.NoError(t, os.Remove(filepath.Join(d, filepath.FromSlash(blobName(blob)))))
				})
			},
			want: errMissing, file: blobName(blob), record: -1,
		},
		{
			name: "truncated events.log",
			bundle: func(t *testing.T) string {
				return editDir(t, dir, func(d string) {
					rewriteLog(t, d, func(h []byte, fr [][]byte, tr []byte) []byte {
						b := joinLog(h, fr, tr)
						return b[:len(h)+len(fr[0])+len(fr[1])+10]
					})
				})
			},
			want: errTruncated, file: eventsFile, record: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.bundle(t)
			_, err := Config{}.Verify(context.Background(), p)
			require.Error(t, err)
			t.Log(err)
			require.ErrorIs(t, err, tc.want)
			var be *BundleError
			require.ErrorAs(t, err, &be)
			require.Equal(t, p, be.Path)
			if tc.file != "" {
				require.Equal(t, tc.file, be.File)
			}
			require.Equal(t, tc.record, be.Record)
			// Load (which keeps blobs) rejects it too.
			_, lerr := Config{}.Load(context.Background(), p)
			require.ErrorIs(t, lerr, tc.want, "Load: %v", lerr)
		})
	}
}

// TestTruncatedFile cuts the single file at many points: every cut is
// rejected (never a panic, never a valid bundle).
func TestTruncatedFile(t *testing.T) {
	_, file := writeBoth(t, single(realisticRun(t, 0)))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	dir := t.TempDir()
	for _, n := range []int{0, 3, 4, 10, len(b) / 4, len(b) / 2, len(b) - 40, len(b) - 5, len(b) - 1} {
		p := filepath.Join(dir, "cut"+FileExt)
		require.NoError(t, os.WriteFile(p, b[:n], 0o644))
		_, err := Config{}.Verify(context.Background(), p)
		require.Error(t, err, "cut at %d of %d", n, len(b))
		var be *BundleError
		require.ErrorAs(t, err, &be, "cut at %d", n)
		if n >= 4 {
			require.ErrorIs(t, err, errTruncated, "cut at %d: %v", n, err)
		}
	}
}
