// Package jsondiff lists where two values differ, one line per
// difference, in a deterministic order, for failure messages:
//
//   - [Lines]: two JSON documents, one line per differing leaf, object
//     keys sorted (the gate's payload field diff, a cassette miss's
//     request body diff, the steward's review);
//   - [PinLines]: two sets of named strings, one line per differing name,
//     names sorted (a run's pins in the gate's report, a bundle's metadata
//     and pins in bundle diff and bundle merge): the one pin diff of the
//     module.
//
// Edits reduces each differing leaf to the change itself (for strings, the
// words that differ), so one change made in several documents reads, and
// compares, as one.
//
// It walks decoded values itself rather than using kr/pretty.Diff, which
// visits map keys in Go map order (its output would differ from run to
// run) and renders json.Number as a quoted string. It is not a patch
// format: its lines are for people.
package jsondiff
