package eventstream

import (
	"errors"
	"fmt"
	"hash/crc32"
)

// Bounds of one message, as the AWS SDKs have enforced them.
const (
	prelude    = 12 // total length, headers' length, prelude CRC
	minLen     = prelude + 4
	maxHeaders = 128 << 10
	maxPayload = 16 << 20
	maxLen     = minLen + maxHeaders + maxPayload
)

// End returns the end of the message of s starting at off, after checking
// its length against the rest of s and the bounds above, its headers'
// length against its length, and both its CRCs. The error says which
// check failed.
func End(s string, off int) (int, error) {
	rest := s[off:]
	if len(rest) < prelude {
		return 0, fmt.Errorf("its %d bytes are too few for the %d-byte prelude", len(rest), prelude)
	}
	total, headers := be32(rest), be32(rest[4:])
	if got, want := crc32.ChecksumIEEE([]byte(rest[:8])), be32(rest[8:]); got != want {
		return 0, fmt.Errorf("the prelude's CRC is %08x, but its bytes' CRC32 is %08x", want, got)
	}
	switch {
	case total < minLen:
		return 0, fmt.Errorf("its length %d is less than the %d bytes of a frame without headers or payload", total, minLen)
	case total > maxLen:
		return 0, fmt.Errorf("its length %d is more than the %d bytes a message may have", total, maxLen)
	case uint64(total) > uint64(len(rest)):
		return 0, fmt.Errorf("its length %d runs past the end of the body (%d bytes left)", total, len(rest))
	case headers > maxHeaders:
		return 0, fmt.Errorf("its headers' length %d is more than the %d bytes headers may have", headers, maxHeaders)
	case headers > total-minLen:
		return 0, fmt.Errorf("its headers' length %d does not fit in its length %d", headers, total)
	}
	msg := rest[:total]
	if got, want := crc32.ChecksumIEEE([]byte(msg[:total-4])), be32(msg[total-4:]); got != want {
		return 0, fmt.Errorf("the message CRC is %08x, but its bytes' CRC32 is %08x", want, got)
	}
	return off + int(total), nil
}

// A Message is the content of one message: its headers of type string
// (":event-type", ":message-type", ":exception-type", ...) and its
// payload.
type Message struct {
	Headers map[string]string
	Payload string
}

// errHeaders is Decode's error for headers that cannot be read.
var errHeaders = errors.New("its headers cannot be read")

// Decode reads msg, one whole message as End delimits it: its lengths are
// checked again, its CRCs are not. Headers of types other than string are
// skipped (of several of one name, the last counts); a header that runs
// past the headers, or of an unknown type, is an error.
func Decode(msg string) (Message, error) {
	if len(msg) < minLen || uint64(be32(msg)) != uint64(len(msg)) || uint64(be32(msg[4:])) > uint64(len(msg)-minLen) {
		return Message{}, fmt.Errorf("its %d bytes are not one message", len(msg))
	}
	hlen := int(be32(msg[4:]))
	h, err := headers(msg[prelude : prelude+hlen])
	if err != nil {
		return Message{}, err
	}
	return Message{Headers: h, Payload: msg[prelude+hlen : len(msg)-4]}, nil
}

// valueLen is the length of a header value of each fixed-size type (0 and
// 1 are true and false; 6 and 7, bytes and string, carry a 2-byte length
// instead).
var valueLen = [10]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}

// headers decodes a message's headers, keeping those of type string. Of
// headers of one name, the last counts, as in the AWS SDKs.
func headers(b string) (map[string]string, error) {
	h := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+1 {
			return nil, errHeaders
		}
		name, typ := b[1:1+n], b[1+n]
		b = b[2+n:]
		switch {
		case typ == 6 || typ == 7:
			if len(b) < 2 {
				return nil, errHeaders
			}
			vlen := int(be16(b))
			if len(b) < 2+vlen {
				return nil, errHeaders
			}
			if typ == 7 {
				h[name] = b[2 : 2+vlen]
			} else {
				delete(h, name)
			}
			b = b[2+vlen:]
		case int(typ) < len(valueLen):
			if len(b) < valueLen[typ] {
				return nil, errHeaders
			}
			delete(h, name)
			b = b[valueLen[typ]:]
		default:
			return nil, errHeaders
		}
	}
	return h, nil
}

// be32 reads a big-endian uint32 from the first 4 bytes of s.
func be32(s string) uint32 {
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

// be16 reads a big-endian uint16 from the first 2 bytes of s.
func be16(s string) uint16 { return uint16(s[0])<<8 | uint16(s[1]) }
