// Package chunking plans the Read boundaries of a replayed response body:
// as recorded (one frame of an event stream, or the whole body, per Read),
// split mid-frame, several frames joined, single bytes, or a mix. A plan
// changes only where Reads end, never the bytes or their order, so a
// reader that honours the io.Reader contract sees the same stream under
// every plan, and one that assumes a whole frame or line per Read does
// not.
//
// A plan is a pure function of a run number (ForRun), so a gate's report
// is reproducible. The harness puts a run's plan on each request's
// context (With); the cassettes package reads it (From) when it builds
// the replayed response. It is not for callers outside this module: a
// pipeline must not depend on how its bytes are cut.
package chunking
