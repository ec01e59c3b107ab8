// Package tape encodes events.Event values as the records of
// internal/eventrec, one at a time (bundles store them framed) or
// back to back as a tape (a harness child process sends its run's tape to
// the parent this way).
//
// A tape is the records of its events, in order, fields exactly as
// recorded (nothing stripped), with nothing between or around them: its
// length is the sum of its records' lengths.
//
// It is a package of its own because internal/eventrec sits below package
// events (events.Chain hashes eventrec's header records) and a
// conversion from events.Event sits above it.
package tape
