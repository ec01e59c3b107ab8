// Package tapetest provides event tapes for the tests and benchmarks of
// the packages that store and fold them (bundle, and the fold
// benchmarks of fallback): runs shaped like the fallback pipeline's
// (Realistic) and long tapes of fixed-size payloads (Synthetic).
//
// It is test support only: nothing outside tests imports it. It knows no
// pipeline: the caller names the kinds, so a package's tests can record
// made-up kinds and the fallback pipeline's benchmarks its own. Every tape
// is a function of its arguments (fixed clock, fixed IDs).
package tapetest
