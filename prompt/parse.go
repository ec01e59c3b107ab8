package prompt

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse is the inverse of Build for the User text: it recovers the advisory,
// the files (path and exact bytes), the examples in rank order, the recipe
// and the attempts. For every Input x that Build accepts,
// Parse(Build(x).User) equals Builder.Canonical(x). Text that Build did not
// produce gives a *ParseError wrapping ErrMalformedPrompt; Parse never panics.
//
// Parse checks the format, not the rules Build enforces on content (size
// limits, path rules): it returns what the text says.
func Parse(user string) (Input, error) {
	p := &parser{s: user, line: 1}
	in, err := p.prompt()
	if err != nil {
		return Input{}, &ParseError{Op: "parse prompt", Line: p.line, Err: fmt.Errorf("%w: %w", ErrMalformedPrompt, err)}
	}
	return in, nil
}

// parser reads the User text line by line. line is the 1-based number of the
// line at s[pos:].
type parser struct {
	s    string
	pos  int
	line int
}

func (p *parser) eof() bool { return p.pos >= len(p.s) }

// peek returns the next line without its "\n", and whether one exists.
func (p *parser) peek() (string, bool) {
	if p.eof() {
		return "", false
	}
	rest := p.s[p.pos:]
	i := strings.IndexByte(rest, '\n')
	if i < 0 {
		return "", false // every line Build writes ends in "\n"
	}
	return rest[:i], true
}

// next consumes and returns the next line.
func (p *parser) next() (string, error) {
	l, ok := p.peek()
	if !ok {
		if p.eof() {
			return "", errors.New("unexpected end of text")
		}
		return "", errors.New("last line does not end in a newline")
	}
	p.pos += len(l) + 1
	p.line++
	return l, nil
}

// expect consumes a line that must equal want.
func (p *parser) expect(want string) error {
	l, err := p.next()
	if err != nil {
		return fmt.Errorf("want %q: %w", want, err)
	}
	if l != want {
		p.line--
		return fmt.Errorf("want %q, got %q", want, clip(l))
	}
	return nil
}

// prefixed consumes a line that must start with prefix and returns the rest.
func (p *parser) prefixed(prefix string) (string, error) {
	l, err := p.next()
	if err != nil {
		return "", fmt.Errorf("want a line starting %q: %w", prefix, err)
	}
	rest, ok := strings.CutPrefix(l, prefix)
	if !ok {
		p.line--
		return "", fmt.Errorf("want a line starting %q, got %q", prefix, clip(l))
	}
	return rest, nil
}

// field reads a `- name: "quoted"` line.
func (p *parser) field(name string) (string, error) {
	rest, err := p.prefixed("- " + name + ": ")
	if err != nil {
		return "", err
	}
	return unquoteAll(rest)
}

// counted reads a `heading (N)` line.
func (p *parser) counted(heading string) (int, error) {
	rest, err := p.prefixed(heading + " (")
	if err != nil {
		return 0, err
	}
	num, ok := strings.CutSuffix(rest, ")")
	if !ok {
		return 0, fmt.Errorf("%s: want a count in parentheses", heading)
	}
	return atoiCanonical(num)
}

// block reads a fenced block (see the package doc, "Blocks") whose info
// string starts with lang (or "base64") and returns its decoded content.
func (p *parser) block(lang string) ([]byte, error) {
	open, err := p.next()
	if err != nil {
		return nil, fmt.Errorf("want a %s block: %w", lang, err)
	}
	fence := open[:len(open)-len(strings.TrimLeft(open, "`"))]
	if len(fence) < 3 {
		p.line--
		return nil, fmt.Errorf("want a fence of at least 3 backticks, got %q", clip(open))
	}
	parts := strings.Split(open[len(fence):], " ")
	if len(parts) < 2 || len(parts) > 3 || (parts[0] != lang && parts[0] != "base64") {
		return nil, fmt.Errorf("want info string %q, got %q", lang+" bytes=N [noeol]", clip(open))
	}
	numText, ok := strings.CutPrefix(parts[1], "bytes=")
	if !ok {
		return nil, fmt.Errorf("info string %q: want bytes=N", clip(open))
	}
	n, err := atoiCanonical(numText)
	if err != nil {
		return nil, err
	}
	noEOL := len(parts) == 3
	if noEOL && parts[2] != "noeol" {
		return nil, fmt.Errorf("info string %q: unknown flag %q", clip(open), parts[2])
	}
	if n > len(p.s)-p.pos {
		return nil, fmt.Errorf("block says %d bytes, only %d remain", n, len(p.s)-p.pos)
	}
	body := p.s[p.pos : p.pos+n]
	if want := n > 0 && body[n-1] != '\n'; noEOL != want {
		return nil, fmt.Errorf("noeol flag is %v, body says %v", noEOL, want)
	}
	b := []byte(body) // one copy, checked and returned
	if want := fenceFor(b); fence != want {
		return nil, fmt.Errorf("fence is %d backticks, want %d for this body", len(fence), len(want))
	}
	p.pos += n
	p.line += strings.Count(body, "\n")
	if noEOL {
		if p.eof() || p.s[p.pos] != '\n' {
			return nil, errors.New("want a newline after a noeol body")
		}
		p.pos++
		p.line++
	}
	if err := p.expect(fence); err != nil {
		return nil, fmt.Errorf("closing fence: %w", err)
	}
	if parts[0] == "base64" {
		return decodeBase64(body)
	}
	if isBinary(b) {
		return nil, errors.New("text block holds binary content; Build writes it as base64")
	}
	if n == 0 {
		return nil, nil
	}
	return b, nil
}

func decodeBase64(body string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(body, "\n", ""))
	if err != nil {
		return nil, fmt.Errorf("base64 block: %w", err)
	}
	if string(encodeBase64(b)) != body || !isBinary(b) {
		return nil, errors.New("base64 block is not in the form Build writes")
	}
	return b, nil
}

func (p *parser) blockString(lang string) (string, error) {
	b, err := p.block(lang)
	return string(b), err
}

func (p *parser) prompt() (Input, error) {
	var in Input
	var err error
	for _, l := range []string{hTask, taskLine, "", hAdvisory} {
		if err := p.expect(l); err != nil {
			return in, err
		}
	}
	a := &in.Advisory
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"id", &a.ID}, {"ecosystem", &a.Ecosystem}, {"package", &a.Package},
		{"vulnerable range", &a.VulnerableRange}, {"fixed version", &a.FixedVersion},
	} {
		if *f.dst, err = p.field(f.name); err != nil {
			return in, err
		}
	}
	if err := p.expectAll("", hSummary); err != nil {
		return in, err
	}
	if a.Summary, err = p.blockString("text"); err != nil {
		return in, err
	}
	if err := p.expectAll("", hDetails); err != nil {
		return in, err
	}
	if a.Details, err = p.blockString("text"); err != nil {
		return in, err
	}
	if err := p.expectAll("", hRecipe); err != nil {
		return in, err
	}
	if in.Recipe, err = p.recipe(); err != nil {
		return in, err
	}

	nFiles, err := p.counted(hFiles)
	if err != nil {
		return in, err
	}
	if err := p.expect(""); err != nil {
		return in, err
	}
	for i := 0; i < nFiles; i++ {
		rest, err := p.prefixed("## File ")
		if err != nil {
			return in, err
		}
		var f File
		if f.Path, err = unquoteAll(rest); err != nil {
			return in, err
		}
		if i > 0 && f.Path <= in.Files[i-1].Path {
			return in, fmt.Errorf("file %q out of order or repeated", f.Path)
		}
		if f.Content, err = p.block("text"); err != nil {
			return in, err
		}
		if err := p.expect(""); err != nil {
			return in, err
		}
		in.Files = append(in.Files, f)
	}

	if l, _ := p.peek(); strings.HasPrefix(l, hExamples+" ") {
		if in.Examples, err = p.examples(); err != nil {
			return in, err
		}
	}
	if l, _ := p.peek(); strings.HasPrefix(l, hAttempts+" ") {
		if in.Attempts, err = p.attempts(); err != nil {
			return in, err
		}
	}
	if err := p.expectAll(hAnswer, answerLine); err != nil {
		return in, err
	}
	if !p.eof() {
		return in, errors.New("text after the answer instructions")
	}
	return in, nil
}

func (p *parser) expectAll(lines ...string) error {
	for _, l := range lines {
		if err := p.expect(l); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) recipe() (RecipeSelection, error) {
	var r RecipeSelection
	var err error
	if r.Recipe, err = p.field("recipe"); err != nil {
		return r, err
	}
	last := ""
	for {
		l, ok := p.peek()
		if !ok {
			return r, errors.New("unexpected end of text in recipe")
		}
		if l == "" {
			p.pos++
			p.line++
			return r, nil
		}
		rest, err := p.prefixed("- param ")
		if err != nil {
			return r, err
		}
		kq, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return r, fmt.Errorf("param key: %w", err)
		}
		k, _ := strconv.Unquote(kq)
		vq, ok := strings.CutPrefix(rest[len(kq):], ": ")
		if !ok {
			return r, fmt.Errorf("param %q: want \": \" after the key", k)
		}
		v, err := unquoteAll(vq)
		if err != nil {
			return r, err
		}
		if r.Params != nil && k <= last {
			return r, fmt.Errorf("param %q out of order or repeated", k)
		}
		if r.Params == nil {
			r.Params = map[string]string{}
		}
		r.Params[k] = v
		last = k
	}
}

func (p *parser) examples() ([]Example, error) {
	n, err := p.counted(hExamples)
	if err != nil {
		return nil, err
	}
	if err := p.expectAll(examplesTxt, ""); err != nil {
		return nil, err
	}
	var out []Example
	for i := 1; i <= n; i++ {
		var e Example
		if err := p.expect("## Example " + strconv.Itoa(i)); err != nil {
			return nil, err
		}
		if e.ID, err = p.field("id"); err != nil {
			return nil, err
		}
		if e.Ecosystem, err = p.field("ecosystem"); err != nil {
			return nil, err
		}
		if e.Package, err = p.field("package"); err != nil {
			return nil, err
		}
		score, err := p.prefixed("- score: ")
		if err != nil {
			return nil, err
		}
		if e.Score, err = parseScore(score); err != nil {
			return nil, err
		}
		if e.Band, err = p.field("band"); err != nil {
			return nil, err
		}
		if err := p.expect("### Advisory"); err != nil {
			return nil, err
		}
		if e.Advisory, err = p.blockString("text"); err != nil {
			return nil, err
		}
		if err := p.expect("### Fix"); err != nil {
			return nil, err
		}
		if e.Fix, err = p.blockString("diff"); err != nil {
			return nil, err
		}
		if err := p.expect(""); err != nil {
			return nil, err
		}
		if i > 1 && compareExamples(out[i-2], e) > 0 {
			return nil, fmt.Errorf("example %d out of rank order", i)
		}
		out = append(out, e)
	}
	return out, nil
}

func (p *parser) attempts() ([]AttemptSummary, error) {
	n, err := p.counted(hAttempts)
	if err != nil {
		return nil, err
	}
	if err := p.expectAll(attemptsTxt, ""); err != nil {
		return nil, err
	}
	var out []AttemptSummary
	for i := 0; i < n; i++ {
		var x AttemptSummary
		num, err := p.prefixed("## Attempt ")
		if err != nil {
			return nil, err
		}
		if x.Attempt, err = atoiCanonical(num); err != nil {
			return nil, err
		}
		if x.Attempt < 1 {
			return nil, fmt.Errorf("attempt number %d below 1", x.Attempt)
		}
		if x.Recipe, err = p.field("recipe"); err != nil {
			return nil, err
		}
		if x.Outcome, err = p.field("outcome"); err != nil {
			return nil, err
		}
		if err := p.expect("### Error"); err != nil {
			return nil, err
		}
		if x.Error, err = p.blockString("text"); err != nil {
			return nil, err
		}
		if err := p.expect(""); err != nil {
			return nil, err
		}
		if i > 0 && compareAttempts(out[i-1], x) > 0 {
			return nil, fmt.Errorf("attempt %d out of order", x.Attempt)
		}
		out = append(out, x)
	}
	return out, nil
}

// unquoteAll unquotes s, which must be exactly one Go double-quoted string in
// the form strconv.Quote writes.
func unquoteAll(s string) (string, error) {
	v, err := strconv.Unquote(s)
	if err != nil || s[0] != '"' || strconv.Quote(v) != s {
		return "", fmt.Errorf("want a quoted string, got %q", clip(s))
	}
	return v, nil
}

// atoiCanonical parses a non-negative decimal without sign or leading zeros.
func atoiCanonical(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("want a decimal count, got %q", clip(s))
	}
	return n, nil
}

func parseScore(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err == nil {
		if q, ok := quantize(f); ok && strconv.FormatFloat(q, 'f', ScoreDecimals, 64) == s {
			return q, nil
		}
	}
	return 0, fmt.Errorf("want a score with %d decimals, got %q", ScoreDecimals, clip(s))
}

// clip bounds text quoted in error messages.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
