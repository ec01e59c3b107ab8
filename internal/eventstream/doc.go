// Package eventstream splits and reads AWS's binary event stream
// (application/vnd.amazon.eventstream), the framing of Bedrock's
// ConverseStream and InvokeModelWithResponseStream: [End] finds where a
// message ends after checking its lengths, its bounds and both CRCs;
// [Decode] reads the string headers and the payload of one message.
//
// A message is a prelude (its total length and its headers' length,
// big-endian uint32s, then the CRC32 of those 8 bytes), the headers, the
// payload, and the CRC32 of everything before it (both IEEE). A header is
// a 1-byte name length, the name, a 1-byte value type and the value.
//
// It does not encode messages (tests use the AWS SDK's encoder) and does
// not read streams: bodies are whole strings, as cassettes hold them.
package eventstream
