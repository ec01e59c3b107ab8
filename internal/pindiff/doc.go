// Package pindiff lists the differences between two sets of named
// strings (a run's pins, a bundle's metadata) as lines sorted by name, so
// that whatever prints them prints the same bytes every time. It is the
// one pin diff of the module: the determinism gate's report, bundle diff
// and bundle merge all use it.
//
// It is not a general value diff: kr/pretty.Diff walks map keys in Go's
// random order, which is fine in a test failure and wrong in a tool's
// output.
package pindiff
