// Package fuzz holds the cassettes package's fuzz targets, through its
// public API, in a test binary that links nothing else: the package's own
// tests link the LLM SDKs, which fuzzing instrumentation makes very slow
// to build. It has no non-test code.
package fuzz
