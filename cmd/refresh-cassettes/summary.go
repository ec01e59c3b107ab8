package main

import (
	"fmt"
	"io"

	"github.com/codegenie/codegenie/cassettes/review"
)

// summary prints what an applied refresh changed, from its review, and
// what to do next.
func summary(o *options, rev *review.Review, stdout io.Writer) {
	changed := 0
	fmt.Fprintln(stdout, "refresh-cassettes: summary:")
	for _, c := range rev.Cassettes {
		key := c.File
		for _, t := range targets() {
			if t.file == c.File {
				key = t.key
			}
		}
		n := counts(c)
		if c.OldDigest == c.NewDigest {
			fmt.Fprintf(stdout, "  %s: unchanged (%d interactions, digest %s)\n", key, n.interactions, c.NewDigest)
			continue
		}
		changed++
		if c.OldDigest == "" {
			fmt.Fprintf(stdout, "  %s: new: %d interactions, model %s, tokens in %d out %d, digest %s\n",
				key, n.interactions, n.model, c.After.Input, c.After.Output, c.NewDigest)
			continue
		}
		text := "response text unchanged"
		if n.textChanged {
			text = "response text CHANGED"
		}
		fmt.Fprintf(stdout, "  %s: changed: %d added, %d removed, %d changed, %d same; %s; model %s; tokens in %d -> %d, out %d -> %d; digest %s -> %s\n",
			key, n.changes["added"], n.changes["removed"], n.changes["changed"], n.changes["unchanged"], text, n.model,
			c.Before.Input, c.After.Input, c.Before.Output, c.After.Output, c.OldDigest, c.NewDigest)
	}
	if changed > 0 {
		fmt.Fprintf(stdout, "refresh-cassettes: %d cassettes changed. Refresh the golden digests that pin them:\n\t%s\nthen review the diff (the review is in %s) and commit %s (cassettes and manifest.json) with the goldens.\n",
			changed, o.goldenCmd, o.reviewDir, o.dir)
	} else {
		fmt.Fprintln(stdout, "refresh-cassettes: no cassette changed; the goldens stay valid.")
	}
}

// cassetteCounts is what the summary line of one reviewed cassette says.
type cassetteCounts struct {
	interactions int            // in the new cassette
	changes      map[string]int // by review.Interaction.Change
	model        string         // the first model the new responses name
	textChanged  bool           // some response's text differs, or was added or removed
}

func counts(c review.Cassette) cassetteCounts {
	n := cassetteCounts{changes: map[string]int{}}
	for _, in := range c.Interactions {
		n.changes[in.Change]++
		if in.After != nil {
			n.interactions++
			if n.model == "" {
				n.model = in.After.Model
			}
		}
		switch {
		case len(in.TextDiff) > 0:
			n.textChanged = true
		case in.Before == nil && in.After != nil && in.After.Text != "":
			n.textChanged = true
		case in.After == nil && in.Before != nil && in.Before.Text != "":
			n.textChanged = true
		}
	}
	return n
}
