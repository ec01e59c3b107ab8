package harness

import (
	"github.com/codegenie/codegenie/cassettes"
)

// maskText masks the credentials in text that leaves the harness (error
// texts in test output, reports, bundles, result files and ledger
// entries; request URLs and bodies in a request diff) with the rules
// the cassettes are scanned with, URL query credentials included, and
// every occurrence of each key (the recording key).
func maskText(s string, keys ...string) string { return cassettes.Mask(s, keys...) }
