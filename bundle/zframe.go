package bundle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// frameReader hands exactly one zstd frame of its source to the
// decompressor and then reports io.EOF, so that nothing after the frame is
// ever decompressed; trailing then tells whether the file goes on. It
// parses only the frame's structure (RFC 8878 section 3.1.1: header, block
// headers, checksum), never its contents.
type frameReader struct {
	src    *bufio.Reader
	window int64 // the window the frame header asks for
	sum    bool  // the frame ends with a content checksum
	left   int64 // bytes left in the current part
	part   framePart
	last   bool  // the current block is the last one
	block  int64 // the size of the current block's contents
	passed int64 // bytes handed to the decompressor
}

type framePart int

const (
	partHeader framePart = iota
	partBlockHeader
	partBlock
	partChecksum
	partDone
)

// maxBlock is the largest block a frame may hold (Block_Maximum_Size).
const maxBlock = 128 << 10

// newFrameReader parses the frame header at the start of src. A source
// that does not start with a zstd frame, or whose frame asks for a window
// larger than maxWindow, is an errMalformed or errTooLarge error.
func newFrameReader(src *bufio.Reader) (*frameReader, error) {
	h, _ := src.Peek(6)
	if len(h) < 4 || !bytes.Equal(h[:4], zstdMagic) {
		return nil, wrapf(errMalformed, "not a bundle: neither a directory nor a zstd-compressed file")
	}
	if len(h) < 5 {
		return nil, wrapf(errTruncated, "the file ends inside the zstd frame header")
	}
	fhd := h[4]
	fcsFlag, single, sum, dictFlag := fhd>>6, fhd&0x20 != 0, fhd&0x04 != 0, fhd&0x03
	if fhd&0x08 != 0 {
		return nil, wrapf(errMalformed, "zstd frame header: reserved bit set")
	}
	if dictFlag != 0 {
		return nil, wrapf(errMalformed, "the zstd frame needs a dictionary; bundles use none")
	}
	n := 5
	var window int64
	if !single {
		if len(h) < 6 {
			return nil, wrapf(errTruncated, "the file ends inside the zstd frame header")
		}
		wd := h[5]
		base := int64(1) << (10 + wd>>3)
		window = base + base/8*int64(wd&7)
		n++
	}
	fcsLen := [4]int{0, 2, 4, 8}[fcsFlag]
	if single && fcsFlag == 0 {
		fcsLen = 1
	}
	hdr, err := src.Peek(n + fcsLen)
	if err != nil {
		return nil, wrapf(errTruncated, "the file ends inside the zstd frame header")
	}
	if single {
		var b [8]byte
		copy(b[:], hdr[n:])
		window = int64(binary.LittleEndian.Uint64(b[:]))
		if fcsLen == 2 {
			window += 256
		}
		if window < 0 {
			window = 1 << 62
		}
	}
	if window > maxWindow {
		return nil, wrapf(errTooLarge, "the zstd frame asks for a %d-byte window; bundles use at most %d (decompressing it would take that much memory)", window, maxWindow)
	}
	return &frameReader{src: src, window: window, sum: sum, left: int64(n + fcsLen), part: partHeader}, nil
}

func (f *frameReader) Read(p []byte) (int, error) {
	for f.left == 0 {
		if err := f.nextPart(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.src.Read(p)
	f.left -= int64(n)
	f.passed += int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// nextPart moves to the part after the one just passed on; io.EOF after
// the frame's last part.
func (f *frameReader) nextPart() error {
	switch f.part {
	case partHeader, partBlock:
		if f.part == partBlock && f.last {
			f.part, f.left = partChecksum, 0
			if f.sum {
				f.left = 4
			}
			return nil
		}
		h, err := f.src.Peek(3)
		if err != nil {
			return io.ErrUnexpectedEOF
		}
		bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		f.last = bh&1 != 0
		size := int64(bh >> 3)
		switch (bh >> 1) & 3 {
		case 1: // RLE: one byte stands for size bytes
			size = 1
		case 3:
			return fmt.Errorf("%w: zstd block of reserved type", errMalformed)
		}
		if size > maxBlock {
			return fmt.Errorf("%w: zstd block of %d bytes, at most %d", errMalformed, size, maxBlock)
		}
		f.part, f.left = partBlockHeader, 3
		f.block = size
	case partBlockHeader:
		f.part, f.left = partBlock, f.block
	case partChecksum, partDone:
		f.part = partDone
		return io.EOF
	}
	return nil
}

// trailing reports an error when anything follows the frame in the file.
func (f *frameReader) trailing() error {
	if f.part != partDone {
		return nil
	}
	if b, _ := f.src.Peek(1); len(b) > 0 {
		return wrapf(errMalformed, "the file goes on after its zstd frame (another frame or other data): a bundle is exactly one zstd frame")
	}
	return nil
}
