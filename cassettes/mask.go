package cassettes

import (
	"net/url"
	"strconv"

	"github.com/codegenie/codegenie/cassettes/internal/secrets"
)

// Mask returns text with every credential the cassette secret scan finds
// (the gitleaks ruleset, the package's own rules, credentials in URL query
// parameters such as ?key=...) replaced by "REDACTED", and so is every
// occurrence of each key at least 8 bytes long, as written, query-escaped,
// path-escaped or quoted as a Go or JSON string. It is for text that leaves
// the process (error messages, reports); masking its result again returns
// it unchanged.
func Mask(text string, keys ...string) string {
	var lits []string
	for _, k := range keys {
		if len(k) < 8 {
			continue
		}
		lits = append(lits, k, url.QueryEscape(k), url.PathEscape(k))
		if q := strconv.Quote(k); len(q) >= 10 {
			lits = append(lits, q[1:len(q)-1])
		}
	}
	return secrets.Mask(text, redacted, lits...)
}
