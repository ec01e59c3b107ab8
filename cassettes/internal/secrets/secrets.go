package secrets

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// GitleaksVersion is the gitleaks release gitleaks.json was generated from.
const GitleaksVersion = "v8.30.1"

// The sed step writes the "-" after "sk" as the JSON escape \u002d, which
// decodes to the same rule text, so that secret scanners run over this
// repository do not take the rules' key prefixes for keys.
//
//go:generate sh -c "go mod download github.com/zricethezav/gitleaks/v8@v8.30.1 && go run github.com/pelletier/go-toml/v2/cmd/tomljson@v2.2.4 \"$(go env GOMODCACHE)/github.com/zricethezav/gitleaks/v8@v8.30.1/config/gitleaks.toml\" | sed 's/\\bsk-/sk\\\\u002d/g' > gitleaks.json"

//go:embed gitleaks.json
var gitleaksJSON []byte

// Finding locates one secret in the scanned text without holding it.
type Finding struct {
	// Rule is the rule's id, e.g. "github-fine-grained-pat".
	Rule string
	// Description says what the secret is.
	Description string
	// Start and End delimit the secret's bytes in the text.
	Start, End int

	matchStart, matchEnd int // the rule's whole match
}

// Rule describes one rule in force.
type Rule struct {
	ID, Description string
	// Source is "gitleaks" or "codegenie".
	Source string
}

type allowlist struct {
	Condition   string   `json:"condition"`
	Paths       []string `json:"paths"`
	RegexTarget string   `json:"regexTarget"`
	Regexes     []string `json:"regexes"`
	StopWords   []string `json:"stopwords"`

	regexes *regexp.Regexp
}

type rule struct {
	ID          string       `json:"id"`
	Description string       `json:"description"`
	Regex       string       `json:"regex"`
	Path        string       `json:"path"`
	SecretGroup int          `json:"secretGroup"`
	Entropy     float64      `json:"entropy"`
	Keywords    []string     `json:"keywords"`
	Allowlists  []*allowlist `json:"allowlists"`

	source string
	re     *regexp.Regexp
	maxLen int       // longest match in bytes, -1 for unbounded or above maxWindow
	ids    []int     // the keywords' ids in the ruleset's keyword index
	anch   *anchored // for a rule with maxLen -1, where its matches can start; nil if unknown
}

type ruleset struct {
	Allowlist *allowlist `json:"allowlist"`
	Rules     []*rule    `json:"rules"`

	keywords *keywords
}

// extraRules catch credential shapes the gitleaks ruleset lets through.
var extraRules = []*rule{
	{ID: "google-oauth-access-token", Description: "a Google OAuth 2.0 access token (ya29.)",
		Regex: `\bya29\.[0-9A-Za-z_\-]{20,}`, Keywords: []string{"ya29."}},
	{ID: "groq-api-key", Description: "a Groq API key (gsk_)",
		Regex: `\bgsk_[0-9A-Za-z]{20,}`, Keywords: []string{"gsk_"}},
	{ID: "anthropic-key-any-length", Description: "an Anthropic API key (sk-ant-) of any length",
		Regex: `\bsk-ant-[0-9A-Za-z_\-]{16,}`, Keywords: []string{"sk-ant-"}},
	{ID: "openai-key-any-length", Description: "an OpenAI-style API key (sk-, sk-proj-) of any length",
		Regex: `\bsk-(?:proj-|svcacct-|admin-)?[0-9A-Za-z_\-]{32,}`, Entropy: 3, Keywords: []string{"sk-"}},
	{ID: "huggingface-token-any-length", Description: "a Hugging Face token (hf_) of any length",
		Regex: `\bhf_[0-9A-Za-z]{30,}`, Entropy: 3, Keywords: []string{"hf_"}},
	{ID: "github-fine-grained-pat-any-length", Description: "a GitHub fine-grained personal access token (github_pat_) of any length",
		Regex: `\bgithub_pat_[0-9A-Za-z_]{40,}`, Keywords: []string{"github_pat_"}},
	{ID: "url-userinfo-password", Description: "a password in a URL's user info (scheme://user:password@host)",
		Regex: `(?i)\b[a-z][a-z0-9+.\-]{1,15}://[^\s:/?#@'"\\]{1,256}:([^\s/?#@'"\\]{1,256})@[^\s/?#@'"\\]`, SecretGroup: 1, Keywords: []string{"@"}},
	{ID: "url-query-credential", Description: "a credential in a URL query parameter (key=, token=, sig=, ...)",
		Regex:       `(?i)[?&;](?:key|api_key|apikey|api-key|access_token|token|auth|sig|signature|client_secret|secret|password|x-amz-signature|x-amz-security-token)=([^&\s#"'<>\\]{8,200})`,
		SecretGroup: 1, Keywords: []string{"key=", "token=", "auth=", "sig=", "signature=", "secret=", "password="},
		Allowlists: []*allowlist{{Regexes: []string{`(?i)^(?:redacted|filtered|removed|masked)$`, `^[^0-9A-Za-z]*$`}}}},
	{ID: "bearer-token", Description: "a bearer token (Bearer ...)",
		Regex: `(?i)\bbearer\s+([0-9A-Za-z._~+/\-]{16,}=*)`, SecretGroup: 1, Entropy: 3, Keywords: []string{"bearer"}},
	{ID: "aws-secret-access-key", Description: "an AWS secret access key (40 characters named as one)",
		Regex:       `(?i)(?:aws|secret)[\w.\-]{0,30}?(?:key|secret)[\w.\-]{0,10}["']?\s{0,3}(?:=|:|=>|,)\s{0,3}["']?([0-9A-Za-z/+]{40})(?:[^0-9A-Za-z/+=]|$)`,
		SecretGroup: 1, Entropy: 3.5, Keywords: []string{"aws", "secret"}},
}

var (
	loadOnce sync.Once
	loaded   *ruleset
	loadErr  error
)

// load parses and compiles the rules once.
func load() (*ruleset, error) {
	loadOnce.Do(func() {
		var rs ruleset
		if err := json.Unmarshal(gitleaksJSON, &rs); err != nil {
			loadErr = fmt.Errorf("secrets: gitleaks.json: %w", err)
			return
		}
		for _, r := range rs.Rules {
			r.source = "gitleaks"
		}
		for _, r := range extraRules {
			r.source = "codegenie"
		}
		rs.Rules = append(rs.Rules, extraRules...)
		for _, r := range rs.Rules {
			if r.Regex == "" || r.Path != "" {
				continue // needs a file path
			}
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				loadErr = fmt.Errorf("secrets: rule %s: %w", r.ID, err)
				return
			}
			r.re = re
			r.maxLen = maxMatchLen(r.Regex)
			for i, k := range r.Keywords {
				r.Keywords[i] = strings.ToLower(k)
			}
			for _, a := range r.Allowlists {
				if err := a.compile(); err != nil {
					loadErr = fmt.Errorf("secrets: rule %s: allowlist: %w", r.ID, err)
					return
				}
			}
		}
		if rs.Allowlist != nil {
			if err := rs.Allowlist.compile(); err != nil {
				loadErr = fmt.Errorf("secrets: global allowlist: %w", err)
				return
			}
		}
		if loadErr = rs.index(); loadErr != nil {
			return
		}
		loaded = &rs
	})
	return loaded, loadErr
}

// index builds the keyword index and the rules' anchors.
func (rs *ruleset) index() error {
	var words []string
	for _, r := range rs.Rules {
		if r.re != nil {
			words = append(words, r.Keywords...)
		}
	}
	k, err := newKeywords(words)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	rs.keywords = k
	for _, r := range rs.Rules {
		if r.re == nil {
			continue
		}
		for _, w := range r.Keywords {
			r.ids = append(r.ids, k.ids[w])
		}
		if r.maxLen < 0 && len(r.Keywords) > 0 {
			r.anch = newAnchored(r)
		}
	}
	return nil
}

func (a *allowlist) compile() error {
	for i, w := range a.StopWords {
		a.StopWords[i] = strings.ToLower(w)
	}
	if len(a.Regexes) == 0 {
		return nil
	}
	re, err := regexp.Compile("(?:" + strings.Join(a.Regexes, ")|(?:") + ")")
	a.regexes = re
	return err
}

// Rules lists the rules in force, gitleaks' first, in file order.
func Rules() []Rule {
	rs, err := load()
	if err != nil {
		panic(err) // the embedded rules are part of the build
	}
	var out []Rule
	for _, r := range rs.Rules {
		if r.re != nil {
			out = append(out, Rule{ID: r.ID, Description: r.Description, Source: r.source})
		}
	}
	return out
}

// maxWindow is the longest match a rule may have for its expression to run
// only around its keywords' occurrences (see doc.go).
const maxWindow = 1 << 10

// Scan returns every secret in text, ordered by Start then End.
func Scan(text string) []Finding { return scan(text, true) }

// dense reports whether windows cover more than an eighth of a text of n
// bytes. Each search from a window runs the expression over up to
// searchWidth runes of starts plus its longest attempt, so where keywords
// are that close together one pass over the whole text (which finds the
// same matches) costs several times less, and its cost stays linear in n
// whatever the text holds.
func dense(windows [][2]int, n int) bool {
	covered := 0
	for _, w := range windows {
		covered += w[1] - w[0] + 1
	}
	return covered > n/8
}

// scan is Scan; windowed false runs every expression over the whole text.
func scan(text string, windowed bool) []Finding {
	rs, err := load()
	if err != nil {
		panic(err) // the embedded rules are part of the build
	}
	occ := rs.keywords.find(text)
	anchors := windowed && utf8.ValidString(text) && !hasFoldOnly(text)
	var out []Finding
	for _, r := range rs.Rules {
		if r.re == nil {
			continue
		}
		if len(r.Keywords) > 0 && !slices.ContainsFunc(r.ids, occ.has) {
			continue
		}
		switch {
		case r.anch != nil && anchors:
			ws := r.anch.windows(text, occ, r.ids)
			if dense(ws, len(text)) {
				out = r.scan(out, text, 0, len(text), rs.Allowlist)
				continue
			}
			out = r.findings(out, text, r.anch.matches(text, ws), rs.Allowlist)
		case len(r.Keywords) == 0 || r.maxLen < 0:
			out = r.scan(out, text, 0, len(text), rs.Allowlist)
		default:
			out = r.scanNear(out, text, occ, windowed, rs.Allowlist)
		}
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.matchStart, b.matchStart), cmp.Compare(a.matchEnd, b.matchEnd))
	})
	return out
}

// scanNear appends the findings of a rule whose matches span at most
// maxLen bytes that lie within maxLen bytes of one of its keywords'
// occurrences, running its expression only there unless windowed is false.
func (r *rule) scanNear(out []Finding, text string, occ *occurrences, windowed bool, global *allowlist) []Finding {
	var spans [][2]int
	for _, id := range r.ids {
		for j := occ.at[id]; j < occ.at[id+1]; j++ {
			spans = append(spans, [2]int{max(0, int(occ.starts[j])-r.maxLen), min(len(text), int(occ.ends[j])+r.maxLen)})
		}
	}
	if !windowed { // the reference: the whole text, then the proximity rule
		n := len(out)
		out = r.scan(out, text, 0, len(text), global)
		kept := out[:n]
		for _, f := range out[n:] {
			if slices.ContainsFunc(spans, func(w [2]int) bool { return f.matchStart >= w[0] && f.matchEnd <= w[1] }) {
				kept = append(kept, f)
			}
		}
		return kept
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	from := 0 // text before from was covered by earlier matches
	for j := 0; j < len(spans); {
		w := spans[j]
		for j++; j < len(spans) && spans[j][0] <= w[1]; j++ {
			w[1] = max(w[1], spans[j][1])
		}
		if w[1] <= from {
			continue
		}
		n := len(out)
		out = r.scan(out, text, max(w[0], from), w[1], global)
		for _, f := range out[n:] {
			from = max(from, f.matchEnd)
		}
	}
	return out
}

// scan appends the rule's findings in text[from:to] to out.
func (r *rule) scan(out []Finding, text string, from, to int, global *allowlist) []Finding {
	ms := r.re.FindAllStringIndex(text[from:to], -1)
	for _, m := range ms {
		m[0], m[1] = m[0]+from, m[1]+from
	}
	return r.findings(out, text, ms, global)
}

// findings appends the findings the rule's matches ms in text make.
func (r *rule) findings(out []Finding, text string, ms [][]int, global *allowlist) []Finding {
	for _, m := range ms {
		match := strings.Trim(text[m[0]:m[1]], "\n")
		mStart := m[0] + strings.Index(text[m[0]:m[1]], match)
		start, end := mStart, mStart+len(match)
		if g := r.re.FindStringSubmatchIndex(match); len(g) >= 4 {
			switch {
			case r.SecretGroup > 0 && 2*r.SecretGroup+1 < len(g):
				if g[2*r.SecretGroup] >= 0 {
					start, end = mStart+g[2*r.SecretGroup], mStart+g[2*r.SecretGroup+1]
				}
			case r.SecretGroup == 0:
				for i := 2; i+1 < len(g); i += 2 {
					if g[i] >= 0 && g[i+1] > g[i] {
						start, end = mStart+g[i], mStart+g[i+1]
						break
					}
				}
			}
		}
		secret := text[start:end]
		if r.Entropy != 0 && entropy(secret) <= r.Entropy {
			continue
		}
		line := lineAround(text, mStart, mStart+len(match))
		if global.allows(secret, match, line) || slices.ContainsFunc(r.Allowlists, func(a *allowlist) bool { return a.allows(secret, match, line) }) {
			continue
		}
		out = append(out, Finding{Rule: r.ID, Description: r.Description, Start: start, End: end, matchStart: m[0], matchEnd: m[1]})
	}
	return out
}

// allows applies one allowlist as gitleaks does to a finding without a
// path or commit.
func (a *allowlist) allows(secret, match, line string) bool {
	if a == nil {
		return false
	}
	target := secret
	switch a.RegexTarget {
	case "match":
		target = match
	case "line":
		target = line
	}
	regexAllowed := a.regexes != nil && target != "" && a.regexes.MatchString(target)
	lower := strings.ToLower(secret)
	stopAllowed := secret != "" && slices.ContainsFunc(a.StopWords, func(w string) bool { return strings.Contains(lower, w) })
	if strings.EqualFold(a.Condition, "AND") {
		if len(a.Paths) > 0 {
			return false // no path to allow
		}
		return (len(a.Regexes) == 0 || regexAllowed) && (len(a.StopWords) == 0 || stopAllowed) &&
			(len(a.Regexes) > 0 || len(a.StopWords) > 0)
	}
	return regexAllowed || stopAllowed
}

// lineAround returns the lines of text that hold [start, end).
func lineAround(text string, start, end int) string {
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	le := strings.IndexByte(text[end:], '\n')
	if le < 0 {
		return text[ls:]
	}
	return text[ls : end+le]
}

// entropy is the Shannon entropy of s's runes in bits, per byte of s, as
// gitleaks computes it, summed in rune order so the result never depends on
// map order.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	runes := make([]rune, 0, len(counts))
	for c := range counts {
		runes = append(runes, c)
	}
	slices.Sort(runes)
	inv := 1.0 / float64(len(s))
	var e float64
	for _, c := range runes {
		f := float64(counts[c]) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// maxMatchLen is the most bytes a match of the expression can span, or -1
// when that is unbounded or above maxWindow.
func maxMatchLen(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return -1
	}
	n := syntaxMax(re.Simplify())
	if n > maxWindow {
		return -1
	}
	return n
}

func syntaxMax(re *syntax.Regexp) int {
	const inf = 1 << 30
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += max(utf8.RuneLen(r), 1)
			if re.Flags&syntax.FoldCase != 0 {
				n += 3 // a case variant may be longer in UTF-8
			}
		}
		return n
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return syntaxMax(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return inf
	case syntax.OpRepeat:
		if re.Max < 0 {
			return inf
		}
		return min(inf, re.Max*syntaxMax(re.Sub[0]))
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n = min(inf, n+syntaxMax(s))
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n = max(n, syntaxMax(s))
		}
		return n
	}
	return 0 // empty width: anchors, word boundaries, empty match
}
