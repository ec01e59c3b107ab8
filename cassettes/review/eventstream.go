package review

import (
	"encoding/binary"
	"hash/crc32"
)

// An esFrame is one message of an AWS event stream
// (application/vnd.amazon.eventstream), as Bedrock's ConverseStream and
// InvokeModelWithResponseStream send them: its string headers (":event-type",
// ":message-type", ":exception-type", ...) and its payload.
type esFrame struct {
	headers map[string]string
	payload []byte
}

// Bounds of one message, as the AWS SDKs enforce them.
const (
	esPrelude     = 12 // total length, headers length, prelude CRC
	esMinLen      = esPrelude + 4
	esMaxHeaders  = 128 << 10
	esMaxPayload  = 16 << 20
	esMaxFrameLen = esMinLen + esMaxHeaders + esMaxPayload
)

// esFrames splits an event-stream body into its messages, checking every
// length against the body and the bounds above and both CRCs (IEEE). It
// stops at the first message that is short, too long or corrupt, and
// returns the messages before it and whether the whole body was read.
// Headers other than strings are skipped.
func esFrames(body []byte) (frames []esFrame, whole bool) {
	for len(body) > 0 {
		if len(body) < esMinLen {
			return frames, false
		}
		total := binary.BigEndian.Uint32(body[0:4])
		hlen := binary.BigEndian.Uint32(body[4:8])
		if total < esMinLen || total > esMaxFrameLen || uint64(total) > uint64(len(body)) ||
			hlen > esMaxHeaders || hlen > total-esMinLen ||
			crc32.ChecksumIEEE(body[0:8]) != binary.BigEndian.Uint32(body[8:12]) ||
			crc32.ChecksumIEEE(body[:total-4]) != binary.BigEndian.Uint32(body[total-4:total]) {
			return frames, false
		}
		h, ok := esHeaders(body[esPrelude : esPrelude+hlen])
		if !ok {
			return frames, false
		}
		frames = append(frames, esFrame{headers: h, payload: body[esPrelude+hlen : total-4]})
		body = body[total:]
	}
	return frames, true
}

// esValueLen is the length of a header value of each fixed-size type
// (0 and 1 are true and false; 6 and 7, bytes and string, carry a
// 2-byte length instead).
var esValueLen = [10]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}

// esHeaders decodes a message's headers, keeping those of type string.
func esHeaders(b []byte) (map[string]string, bool) {
	h := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+1 {
			return nil, false
		}
		name := string(b[1 : 1+n])
		typ := b[1+n]
		b = b[2+n:]
		switch {
		case typ == 6 || typ == 7:
			if len(b) < 2 {
				return nil, false
			}
			vlen := int(binary.BigEndian.Uint16(b))
			if len(b) < 2+vlen {
				return nil, false
			}
			if typ == 7 {
				h[name] = string(b[2 : 2+vlen])
			}
			b = b[2+vlen:]
		case int(typ) < len(esValueLen):
			if len(b) < esValueLen[typ] {
				return nil, false
			}
			b = b[esValueLen[typ]:]
		default:
			return nil, false
		}
	}
	return h, true
}
