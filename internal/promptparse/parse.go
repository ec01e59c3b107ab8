package promptparse

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	pf "github.com/codegenie/codegenie/internal/promptformat"
	"github.com/codegenie/codegenie/prompt"
)

// anySize is the Builder Parse rebuilds with: its limits admit every size,
// so that only the format decides what Parse accepts.
var anySize = prompt.Builder{Limits: prompt.Limits{MaxFileBytes: math.MaxInt, MaxTotalBytes: math.MaxInt}}

// Parse is the inverse of prompt.Builder.Build for the User text: it
// recovers the advisory, the files (path and exact bytes), the examples in
// rank order, the recipe and the attempts. For every Input x that Build
// accepts, Parse(Build(x).User) equals Builder.Canonical(x).
//
// Parse accepts exactly the texts Build produces under some Limits: after
// reading the text it builds the result again and requires the same bytes,
// so Build(Parse(u)).User == u for every u it accepts, under limits that
// admit u's files. Any other text gives an *Error naming the line, wrapping
// ErrMalformed (and, when Build rejects what the text says, the prompt
// package's sentinel too). Parse never panics.
func Parse(user string) (prompt.Input, error) {
	p := &parser{s: user, line: 1}
	in, err := p.prompt()
	if err != nil {
		return prompt.Input{}, &Error{Line: p.line, Err: fmt.Errorf("%w: %w", ErrMalformed, err)}
	}
	if err := p.rebuild(in); err != nil {
		return prompt.Input{}, err
	}
	return in, nil
}

// rebuild checks that in renders back to exactly the text p read.
func (p *parser) rebuild(in prompt.Input) error {
	b, err := anySize.Build(in)
	if err != nil {
		line := 1
		var ie *prompt.InputError
		if errors.As(err, &ie) {
			line = p.lineOf(ie.Field)
		}
		return &Error{Line: line, Err: fmt.Errorf("%w: %w", ErrMalformed, err)}
	}
	if b.User == p.s {
		return nil
	}
	line, got, want := firstLineDiff(p.s, b.User)
	return &Error{Line: line, Err: fmt.Errorf("%w: not the form Build writes: got %q, want %q", ErrMalformed, clip(got), clip(want))}
}

// lineOf returns the line where the text of an Input field starts, for a
// field named as prompt.InputError names it ("Advisory.ID", "Files",
// "Files[2].Path", "Examples[0].Score", "Attempts[1].Attempt"), or 1 for a
// field it does not know.
func (p *parser) lineOf(field string) int {
	var lines []int
	name, rest, _ := strings.Cut(field, "[")
	switch name {
	case "Advisory.ID":
		return max(1, p.at.id)
	case "Advisory.Summary":
		return max(1, p.at.summary)
	case "Files":
		if rest == "" {
			return max(1, p.at.files)
		}
		lines = p.at.file
	case "Examples":
		lines = p.at.score
	case "Attempts":
		lines = p.at.attempt
	}
	num, _, _ := strings.Cut(rest, "]")
	if i, err := strconv.Atoi(num); err == nil && i >= 0 && i < len(lines) {
		return lines[i]
	}
	return 1
}

// firstLineDiff returns the 1-based number of the first line where a and b
// differ, and that line of each.
func firstLineDiff(a, b string) (line int, la, lb string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := strings.LastIndexByte(a[:i], '\n') + 1
	lineAt := func(s string) string {
		rest := s[start:]
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			return rest[:j]
		}
		return rest
	}
	return strings.Count(a[:start], "\n") + 1, lineAt(a), lineAt(b)
}

// parser reads the User text line by line. line is the 1-based number of the
// line at s[pos:]; at holds where the fields read so far start.
type parser struct {
	s    string
	pos  int
	line int
	at   lines
}

// lines are the lines where Input fields start, for errors that Build
// reports on a field: the advisory ID, the summary, the files' count line,
// and each file's heading, example's score and attempt's heading by index.
type lines struct {
	id, summary, files   int
	file, score, attempt []int
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

// expect consumes lines that must equal want, in order.
func (p *parser) expect(want ...string) error {
	for _, w := range want {
		l, err := p.next()
		if err != nil {
			return fmt.Errorf("want %q: %w", w, err)
		}
		if l != w {
			p.line--
			return fmt.Errorf("want %q, got %q", w, clip(l))
		}
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
	v, err := unquote(rest)
	if err != nil {
		p.line--
	}
	return v, err
}

// dest is where a field's value goes.
type dest struct {
	name string
	to   *string
}

// fields reads `- name: "quoted"` lines into the strings given, in order.
func (p *parser) fields(dst ...dest) error {
	for _, f := range dst {
		v, err := p.field(f.name)
		if err != nil {
			return err
		}
		*f.to = v
	}
	return nil
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
	return count(num)
}

// block reads a fenced block (see the prompt package doc, "Blocks") whose
// info string names lang or base64, and returns its decoded content.
// Whether the block is in the canonical form (fence length, flag,
// encoding) is left to the rebuild.
func (p *parser) block(lang string) (string, error) {
	openLine := p.line
	open, err := p.next()
	if err != nil {
		return "", fmt.Errorf("want a %s block: %w", lang, err)
	}
	p.line = openLine // errors about the opening line name it
	fence := open[:len(open)-len(strings.TrimLeft(open, "`"))]
	parts := strings.Split(open[len(fence):], " ")
	if fence == "" || len(parts) < 2 || len(parts) > 3 || (parts[0] != lang && parts[0] != pf.LangBase64) {
		return "", fmt.Errorf("want a fenced block with info string %q, got %q", lang+" "+pf.BytesPrefix+"N ["+pf.NoEOL+"]", clip(open))
	}
	numText, ok := strings.CutPrefix(parts[1], pf.BytesPrefix)
	if !ok {
		return "", fmt.Errorf("info string %q: want %sN", clip(open), pf.BytesPrefix)
	}
	n, err := count(numText)
	if err != nil {
		return "", err
	}
	noEOL := len(parts) == 3
	if noEOL && parts[2] != pf.NoEOL {
		return "", fmt.Errorf("info string %q: unknown flag %q", clip(open), parts[2])
	}
	if n > len(p.s)-p.pos {
		return "", fmt.Errorf("block says %d bytes, only %d remain", n, len(p.s)-p.pos)
	}
	p.line++
	body := p.s[p.pos : p.pos+n]
	p.pos += n
	p.line += strings.Count(body, "\n")
	if noEOL {
		if p.eof() || p.s[p.pos] != '\n' {
			return "", errors.New("want a newline after a noeol body")
		}
		p.pos++
		p.line++
	}
	if err := p.expect(fence); err != nil {
		return "", fmt.Errorf("closing fence of the block opened on line %d (do its %sN and %s flag match the body?): %w",
			openLine, pf.BytesPrefix, pf.NoEOL, err)
	}
	if parts[0] != pf.LangBase64 {
		return body, nil
	}
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(body, "\n", ""))
	if err != nil {
		return "", fmt.Errorf("base64 block: %w", err)
	}
	return string(b), nil
}

// unquote unquotes s, which must be exactly one Go quoted string.
func unquote(s string) (string, error) {
	v, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("want a quoted string, got %q", clip(s))
	}
	return v, nil
}

// count parses a non-negative decimal without sign or leading zeros.
func count(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("want a decimal count, got %q", clip(s))
	}
	return n, nil
}

// clip bounds text quoted in error messages.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
