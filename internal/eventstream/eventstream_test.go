package eventstream

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	sdk "github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/require"
)

// message encodes one message with the given raw headers, its prelude
// fields as given (total and hlen 0: the true lengths), and valid CRCs.
func message(total, hlen uint32, headers, payload string) string {
	if total == 0 {
		total = uint32(minLen + len(headers) + len(payload))
	}
	if hlen == 0 {
		hlen = uint32(len(headers))
	}
	b := binary.BigEndian.AppendUint32(nil, total)
	b = binary.BigEndian.AppendUint32(b, hlen)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(append(b, headers...), payload...)
	return string(binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)))
}

// stringHeader is one header of type string, as the format writes it.
func stringHeader(name, value string) string {
	h := append([]byte{byte(len(name))}, name...)
	h = append(h, 7)
	h = binary.BigEndian.AppendUint16(h, uint16(len(value)))
	return string(append(h, value...))
}

// sdkMessage encodes one message with the AWS SDK's encoder.
func sdkMessage(t testing.TB, payload string, headers ...string) string {
	var h sdk.Headers
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], sdk.StringValue(headers[i+1]))
	}
	var b bytes.Buffer
	require.NoError(t, sdk.NewEncoder().Encode(&b, sdk.Message{Headers: h, Payload: []byte(payload)}))
	return b.String()
}

func TestEnd(t *testing.T) {
	one := sdkMessage(t, `{"stopReason":"end_turn"}`, ":event-type", "messageStop", ":message-type", "event")
	end, err := End(one+one, len(one))
	require.NoError(t, err)
	require.Equal(t, 2*len(one), end)

	flip := func(at int) string {
		b := []byte(one)
		b[at] ^= 1
		return string(b)
	}
	for _, tt := range []struct {
		name, in, says string
	}{
		{"shorter than a prelude", one[:11], "its 11 bytes are too few for the 12-byte prelude"},
		{"prelude CRC", flip(8), "the prelude's CRC is"},
		{"a length in the prelude", flip(3), "the prelude's CRC is"},
		{"message CRC", flip(len(one) - 1), "the message CRC is"},
		{"payload", flip(len(one) - 6), "the message CRC is"},
		{"cut short", one[:len(one)-1], "runs past the end of the body"},
		{"shorter than a message", message(15, 0, "", ""), "its length 15 is less than the 16 bytes"},
		{"longer than a message may be", message(maxLen+1, 0, "", ""), "is more than the 16908304 bytes a message may have"},
		{"headers longer than headers may be", message(0, maxHeaders+1, "", ""), "its headers' length 131073 is more than the 131072 bytes"},
		{"headers past the length", message(0, 5, "", "abcd"), "its headers' length 5 does not fit in its length 20"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := End(one+tt.in, len(one))
			require.ErrorContains(t, err, tt.says)
		})
	}
}

func TestDecode(t *testing.T) {
	one := sdkMessage(t, `{"a":1}`, ":event-type", "messageStop", ":content-type", "application/json")
	m, err := Decode(one)
	require.NoError(t, err)
	require.Equal(t, Message{Headers: map[string]string{":event-type": "messageStop", ":content-type": "application/json"}, Payload: `{"a":1}`}, m)

	// Headers of every other type are skipped.
	var h []byte
	for _, v := range []struct {
		typ byte
		val []byte
	}{{0, nil}, {1, nil}, {2, []byte{1}}, {3, []byte{0, 1}}, {4, make([]byte, 4)}, {5, make([]byte, 8)}, {6, []byte{0, 2, 'h', 'i'}}, {8, make([]byte, 8)}, {9, make([]byte, 16)}} {
		h = append(h, 1, 'x', v.typ)
		h = append(h, v.val...)
	}
	m, err = Decode(message(0, 0, string(h)+stringHeader(":event-type", "e"), ""))
	require.NoError(t, err)
	require.Equal(t, Message{Headers: map[string]string{":event-type": "e"}, Payload: ""}, m)

	// Of headers of one name the last counts, whatever its type.
	m, err = Decode(message(0, 0, stringHeader("x", "a")+"\x01x\x00"+stringHeader("y", "b")+stringHeader("y", "c"), ""))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"y": "c"}, m.Headers)

	for _, tt := range []struct{ name, in string }{
		{"a value past the headers", message(0, 0, "\x01x\x07\x00\x09a", "")},
		{"an unknown value type", message(0, 0, "\x01x\x0a", "")},
		{"a name past the headers", message(0, 0, "\x05x", "")},
		{"a fixed-size value past the headers", message(0, 0, "\x01x\x04ab", "")},
		{"not one whole message", one + "x"},
		{"shorter than a message", one[:15]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.in)
			require.Error(t, err)
		})
	}
}

// FuzzEventStream: on any input, End and Decode never panic; End splits
// a body into the messages the AWS SDK's decoder reads from it; a message
// the SDK refuses, End or Decode refuses; Decode reads the string headers
// and payload the SDK reads, or fails. Decode is the stricter: the SDK
// takes headers whose last name is cut short as ending there. Each input
// is tried as a body, and as the headers and payload of one message with
// valid CRCs, which random bytes seldom have.
func FuzzEventStream(f *testing.F) {
	f.Add(sdkMessage(f, `{"delta":{"text":"Hi"}}`, ":event-type", "contentBlockDelta", ":message-type", "event")+sdkMessage(f, ""), "", "")
	f.Add("", "\x01x\x04abcd"+stringHeader("y", "z"), "p")
	f.Add("", "\x01x\x07\x00\x09a", "")
	f.Add("", "\x00\x07\x00\x00", "")
	f.Fuzz(func(t *testing.T, body, headers, payload string) {
		checkAgainstSDK(t, body)
		checkAgainstSDK(t, message(0, 0, headers, payload))
	})
}

// checkAgainstSDK splits and decodes s message by message with End and
// Decode and with the AWS SDK's decoder, and compares.
func checkAgainstSDK(t *testing.T, s string) {
	r := strings.NewReader(s)
	dec := sdk.NewDecoder()
	for off, i := 0, 0; off < len(s); i++ {
		end, err := End(s, off)
		theirs, sdkErr := dec.Decode(r, nil)
		switch {
		case err != nil && sdkErr == nil:
			t.Fatalf("message %d: End refuses what the SDK reads: %v", i, err)
		case err == nil && sdkErr != nil:
			if _, err := Decode(s[off:end]); err == nil {
				t.Fatalf("message %d: the SDK refuses what End splits and Decode reads: %v", i, sdkErr)
			}
			return
		case err != nil:
			return
		case int(r.Size())-r.Len() != end:
			t.Fatalf("message %d: End ends it at %d, the SDK at %d", i, end, int(r.Size())-r.Len())
		}
		ours, err := Decode(s[off:end])
		if err != nil {
			return
		}
		h := map[string]string{}
		for _, x := range theirs.Headers {
			if v, ok := x.Value.(sdk.StringValue); ok {
				h[x.Name] = string(v)
			}
		}
		require.Equal(t, Message{Headers: h, Payload: string(theirs.Payload)}, ours, "message %d", i)
		off = end
	}
}
