// Package sdkgate holds end-to-end tests that gate pipelines built on the
// official LLM SDKs, with their default options, through harness.Check:
// each records against a local fake shaped like the provider's API with
// the cassettes' record flag, replays in synctest bubbles and perturbed
// child processes, and shows that a nondeterministic request is named by
// the field that varies.
//
// The package has no non-test code: the SDKs are linked only into its test
// binary, never into the library packages.
package sdkgate
