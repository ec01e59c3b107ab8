// Package jsondiff lists where two JSON documents differ, one line per
// differing leaf, in a deterministic order (object keys sorted), for
// failure messages: the gate's payload field diff, a cassette miss's
// request body diff, the steward's review. Edits reduces each differing
// leaf to the change itself (for strings, the words that differ), so one
// change made in several documents reads, and compares, as one.
//
// It walks decoded values itself rather than using kr/pretty.Diff, which
// visits map keys in Go map order (its output would differ from run to
// run) and renders json.Number as a quoted string. It is not a patch
// format: its lines are for people.
package jsondiff
