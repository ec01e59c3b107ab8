package gate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// quoteName returns s as it is when every rune is a printable character
// other than a space or a quote, else quoted with Go's escapes: a name
// read from a file never reaches a terminal as raw control bytes.
func quoteName(s string) string {
	if s == "" {
		return `""`
	}
	for _, c := range s {
		if c == utf8.RuneError || !unicode.IsPrint(c) || unicode.IsSpace(c) || c == '"' || c == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}

// printable returns s with every character other than a printable one, a
// space, a tab or a newline written as a Go escape (\x1b, \u202e), so
// that text read from a file never reaches a terminal as control bytes.
func printable(s string) string {
	var sb strings.Builder
	for len(s) > 0 {
		c, n := utf8.DecodeRuneInString(s)
		switch {
		case c == utf8.RuneError && n == 1:
			fmt.Fprintf(&sb, `\x%02x`, s[0])
		case c == '\n' || c == '\t' || c == ' ' || unicode.IsPrint(c):
			sb.WriteRune(c)
		default:
			q := strconv.QuoteRuneToASCII(c)
			sb.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return sb.String()
}

// maxExplanationLines bounds Outcome.Explanation, and lineWidth each of
// its lines.
const (
	maxExplanationLines = 40
	lineWidth           = 200
)

// clipLines returns s without its trailing newlines, cut to at most max
// lines of at most lineWidth bytes each (a cut line ends in "..."), and
// when it cut lines, a last line that says how many and where more is.
func clipLines(s string, max int, more string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if len(l) > lineWidth {
			cut := lineWidth
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			lines[i] = l[:cut] + "..."
		}
	}
	if len(lines) > max {
		n := len(lines) - max
		lines = append(lines[:max], fmt.Sprintf("... %d more lines: %s", n, more))
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// shownVerdict is r's verdict as a summary shows it: FAIL for a PASS
// that is not a pass (too few runs, say), the verdict quoted when it
// holds anything but printable characters.
func shownVerdict(r Result) string {
	if r.Verdict == Pass && !r.OK() {
		return "FAIL"
	}
	return quoteName(string(r.Verdict))
}
