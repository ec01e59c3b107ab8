// Package guard is the replay guard: it makes the operations that would let
// a replayed run differ from the recorded one fail loudly in replay mode,
// and supplies the deterministic stand-ins a replayed run uses instead.
//
// A context is put into replay mode with [WithReplay]. Code on the pipeline
// path calls [AssertReplaySafe] before an operation that may not happen
// during replay; in replay mode the call returns a [*ReplayModeError] naming
// the operation (errors.AsType[*guard.ReplayModeError] finds it). Outside
// replay mode it returns nil and the operation proceeds. The fallback
// pipeline does so for its live operations: a remote embedding call
// (rag.OpenAIEmbedder), and the wall clock and random IDs it stamps events
// with (fallback.Tier.LiveStamps).
//
// The stand-ins:
//
//   - Network: [Transport] returns an *http.Transport whose dialer refuses
//     every connection with a *ReplayModeError naming the host, to be used
//     wherever a cassette would otherwise fall back to a real transport.
//   - Time: [WallClock] hands out the wall clock only outside replay mode;
//     [RecordedClock] ([ClockFromTape]) replays the timestamps of a recorded
//     tape (events.Event.EmittedAt) and never reads the wall clock.
//   - IDs: [RandomIDSource] hands out random IDs only outside replay mode;
//     [IDSource] derives IDs from a RunKey and a sequence number.
//
// [CountingDialer] counts dial attempts and successful connections; attached
// to a context with [WithDialCounter] it also observes every dial refused by
// Transport. Package guardtest installs one in place of
// http.DefaultTransport for the duration of a test.
//
// Package guard is not a sandbox: it can only refuse operations that go
// through it. Code that calls net.Dial or time.Now directly is out of its
// reach; that is what the detvet analyzer is for.
//
// # Deterministic ID format
//
// The ID number seq (1, 2, ...) that [IDSource](runKey) yields is the first
// 16 bytes of
//
//	blake3-256("codegenie/guard/id/v1" || 0x00 || runKey || 0x00 || seq as 8 bytes big-endian)
//
// with the version nibble set to 8 and the variant bits to 10 (an RFC 9562
// version 8 UUID), written in the canonical 8-4-4-4-12 lowercase hex form.
// The same runKey and seq give the same ID on every platform and in every
// version of this package that keeps the "v1" label.
package guard
