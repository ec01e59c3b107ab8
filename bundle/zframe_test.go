package bundle

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// rawFrame wraps content in one zstd frame of raw (uncompressed) blocks
// followed by zeros zero bytes as RLE blocks (4 bytes of file for each
// 128 KiB), with window descriptor wd and no checksum: a way to put
// gigabytes of decompressed data in a small file.
func rawFrame(content []byte, zeros int64, wd byte) []byte {
	out := append(bytes.Clone(zstdMagic), 0x00, wd)
	block := func(typ, size int, last bool) {
		h := uint32(size)<<3 | uint32(typ)<<1
		if last {
			h |= 1
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
	}
	for len(content) > 0 {
		n := min(len(content), maxBlock)
		block(0, n, zeros == 0 && n == len(content))
		out = append(out, content[:n]...)
		content = content[n:]
	}
	for zeros > 0 {
		n := min(zeros, maxBlock)
		block(1, int(n), n == zeros)
		out = append(out, 0)
		zeros -= n
	}
	return out
}

// windowDescriptor8MiB is the window descriptor of an 8 MiB window
// (exponent 13: 2^(10+13)).
const windowDescriptor8MiB = 13 << 3

func singleFile(t testing.TB) (file, tarStream []byte) {
	t.Helper()
	return encodeBundle(t, single(realisticRun(t, 0)))
}

func verifyFileBytes(t testing.TB, b []byte) (*Reader, error) {
	t.Helper()
	r, err := openStreamBytes(context.Background(), "x"+FileExt, b, false, false)
	if err != nil {
		return nil, err
	}
	for {
		if err := r.step(); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return r, err
		}
	}
}

// TestStopsAtTheEndOfTheTarStream: 16 GiB of zeros after the end of the
// tar stream (512 KiB of file) are an error at the first byte, and almost
// nothing of them is decompressed.
func TestStopsAtTheEndOfTheTarStream(t *testing.T) {
	_, ts := singleFile(t)
	ok, err := verifyFileBytes(t, rawFrame(ts, 0, windowDescriptor8MiB))
	require.NoError(t, err, "the crafted frame is a valid bundle without the zeros")
	ok.Close()

	b := rawFrame(ts, 16<<30, windowDescriptor8MiB)
	r, err := verifyFileBytes(t, b)
	require.ErrorIs(t, err, errMalformed)
	require.Contains(t, err.Error(), "data follows the end of the tar stream")
	var be *BundleError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "", be.File, "the fault is the file's, not a file inside it")
	defer r.Close()
	require.Less(t, r.src.frame.passed, int64(len(ts))+64<<10, "what follows the tar stream is not decompressed (%d of %d bytes of file)", r.src.frame.passed, len(b))
}

// TestOneZstdFrame: a bundle file is exactly one zstd frame: an empty
// frame, a skippable frame or other bytes after it are errors naming the
// file itself.
func TestOneZstdFrame(t *testing.T) {
	file, _ := singleFile(t)
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	empty := enc.EncodeAll(nil, nil)
	require.NoError(t, enc.Close())
	skippable := binary.LittleEndian.AppendUint32(nil, 0x184D2A50)
	skippable = binary.LittleEndian.AppendUint32(skippable, 3)
	skippable = append(skippable, "abc"...)
	for _, tc := range []struct{ name, tail string }{
		{"empty frame", string(empty)},
		{"skippable frame", string(skippable)},
		{"junk", "junk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := verifyFileBytes(t, append(bytes.Clone(file), tc.tail...))
			require.ErrorIs(t, err, errMalformed)
			require.Contains(t, err.Error(), "goes on after its zstd frame")
			var be *BundleError
			require.ErrorAs(t, err, &be)
			require.Equal(t, "", be.File)
			require.NotContains(t, err.Error(), eventsFile)
		})
	}
}

// TestOversizedWindowNamesTheFrame: a frame asking for a larger window
// than bundles use is refused before anything is decompressed, naming the
// frame, not manifest.json.
func TestOversizedWindowNamesTheFrame(t *testing.T) {
	_, ts := singleFile(t)
	_, err := verifyFileBytes(t, rawFrame(ts, 0, 20<<3)) // 1 GiB
	require.ErrorIs(t, err, errTooLarge)
	require.Contains(t, err.Error(), "zstd frame asks for a 1073741824-byte window")
	require.NotContains(t, err.Error(), manifestFile)
}

// TestSymlinkedBundleIsNamed: a link is refused with a message that says
// it is a link and where it points.
func TestSymlinkedBundleIsNamed(t *testing.T) {
	_, file := writeBoth(t, single(realisticRun(t, 0)))
	link := filepath.Join(t.TempDir(), "link"+FileExt)
	require.NoError(t, os.Symlink(file, link))
	_, err := Config{}.Verify(context.Background(), link)
	require.ErrorIs(t, err, errUnsafeName)
	require.Contains(t, err.Error(), "a symbolic link (to \""+file+"\")")
	require.NotContains(t, err.Error(), "L---------")
}
