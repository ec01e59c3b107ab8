// Package secrets finds credentials in text. Its rules are the default
// ruleset of gitleaks (github.com/zricethezav/gitleaks/v8, config/gitleaks.toml
// at GitleaksVersion, MIT licensed: see gitleaks.LICENSE), converted to JSON
// by go generate, plus the few rules in extraRules for credential shapes
// that ruleset does not catch. It is the cassettes package's scanner: it
// knows nothing of cassettes.
//
// A rule applies as gitleaks applies it to a file with no path: the rule's
// keywords prefilter the text (case-insensitively), its regular expression
// finds matches (one whose matches span at most 1 KiB, worked out from the
// expression, counts a match only if one of its keywords occurs in the
// window around the match that far on each side: a few gitleaks rules,
// such as Sourcegraph's bare 40-hex alternative, would otherwise flag every
// git hash in a text that names the service anywhere), the secret is the rule's secretGroup (or the first
// non-empty group, or the whole match trimmed of newlines), a secret whose
// Shannon entropy is at or below the rule's entropy is dropped, and so is
// one the global or the rule's allowlists allow (regexes against the
// secret, match or line, stop words in the secret; an allowlist that needs
// a path or commit never allows). Rules that need a file path are skipped.
// Unlike gitleaks, a "gitleaks:allow" comment allows nothing, and encoded
// (base64, hex, percent) text is not decoded: the cassettes package
// decodes what a cassette's formats define as content and scans that too.
// Such a rule's expression runs only in those windows, which is much
// faster on long texts; a
// differential fuzz test holds this equal to running it over the whole
// text and keeping the matches in a window.
//
// Updating the rules: change the version in the go:generate line of
// secrets.go and GitleaksVersion, run go generate, and review the diff of
// gitleaks.json and of the tests.
package secrets
