package main

import (
	"fmt"
	"io"
)

// summary prints what an applied refresh changed, and what to do next.
func summary(o *options, recs []recorded, stdout io.Writer) {
	changed := 0
	fmt.Fprintln(stdout, "refresh-cassettes: summary:")
	for _, r := range recs {
		ch, key := r.change, r.t.key
		if ch.OldDigest == ch.NewDigest {
			fmt.Fprintf(stdout, "  %s: unchanged (%d interactions, digest %s)\n", key, ch.NewInteractions, ch.NewDigest)
			continue
		}
		changed++
		if ch.OldDigest == "" {
			fmt.Fprintf(stdout, "  %s: new: %d interactions, model %s, tokens in %d out %d, digest %s\n",
				key, ch.NewInteractions, ch.Model, ch.NewInputTokens, ch.NewOutputTokens, ch.NewDigest)
			continue
		}
		text := "response text unchanged"
		if ch.TextChanged {
			text = "response text CHANGED"
		}
		fmt.Fprintf(stdout, "  %s: changed: %d added, %d removed, %d changed, %d same; %s; model %s; tokens in %d -> %d, out %d -> %d; digest %s -> %s\n",
			key, ch.Added, ch.Removed, ch.Changed, ch.Same, text, ch.Model,
			ch.OldInputTokens, ch.NewInputTokens, ch.OldOutputTokens, ch.NewOutputTokens,
			ch.OldDigest, ch.NewDigest)
	}
	if changed > 0 {
		fmt.Fprintf(stdout, "refresh-cassettes: %d cassettes changed. Refresh the golden digests that pin them:\n\t%s\nthen review the diff (the review is in %s) and commit %s (cassettes and manifest.json) with the goldens.\n",
			changed, o.goldenCmd, o.reviewDir, o.dir)
	} else {
		fmt.Fprintln(stdout, "refresh-cassettes: no cassette changed; the goldens stay valid.")
	}
}
