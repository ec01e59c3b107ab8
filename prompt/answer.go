package prompt

import (
	"errors"
	"fmt"
	"strings"
)

// ParseAnswer extracts the unified diff from a model answer written in the
// answer format the System prompt documents (see the package doc, "Answer
// format"). The returned bytes are the block's lines, each ending in "\n",
// otherwise exactly as the model wrote them.
//
// An answer with no diff block, or one holding only whitespace, gives an
// error wrapping ErrNoDiff; several diff blocks, an unterminated block, or a
// block that is not a unified diff give one wrapping ErrMalformedAnswer.
// Errors are *ParseError values naming the line. ParseAnswer never panics.
func ParseAnswer(answer string) ([]byte, error) {
	fail := func(line int, sentinel error, format string, args ...any) error {
		return &ParseError{Line: line,
			Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
	}
	lines := strings.Split(answer, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var (
		diff      []byte
		found     int // line of the first diff block's opening fence, 0 if none
		open      int // line of the current block's opening fence, 0 outside blocks
		openFence int
		inDiff    bool
	)
	for i, l := range lines {
		n := i + 1
		trimmed := strings.TrimRight(l, " \t\r")
		ticks := len(trimmed) - len(strings.TrimLeft(trimmed, "`"))
		if open == 0 {
			info := strings.TrimSpace(trimmed[ticks:])
			if ticks < 3 || strings.Contains(info, "`") {
				continue // prose
			}
			open, openFence = n, ticks
			inDiff = firstWord(info) == "diff"
			if inDiff {
				if found != 0 {
					return nil, fail(n, ErrMalformedAnswer,
						"a second diff block (the first opens on line %d); answer with exactly one", found)
				}
				found = n
			}
			continue
		}
		if ticks >= openFence && ticks == len(trimmed) {
			open, inDiff = 0, false
			continue
		}
		if inDiff {
			diff = append(diff, l...)
			diff = append(diff, '\n')
		}
	}
	if open != 0 {
		return nil, fail(open, ErrMalformedAnswer, "code block is not closed; close it with a line of %d backticks", openFence)
	}
	if found == 0 {
		return nil, fail(0, ErrNoDiff, "no ```diff block")
	}
	if strings.TrimSpace(string(diff)) == "" {
		return nil, fail(found, ErrNoDiff, "the diff block is empty")
	}
	if err := looksUnified(diff); err != nil {
		return nil, fail(found, ErrMalformedAnswer, "%v", err)
	}
	return diff, nil
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// looksUnified checks the minimum a unified diff has: a "diff --git" line,
// or a "--- " line directly followed by a "+++ " line.
func looksUnified(diff []byte) error {
	lines := strings.Split(string(diff), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") {
			return nil
		}
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return nil
		}
	}
	return errors.New("the diff block is not a unified diff (no \"--- a/path\" / \"+++ b/path\" header)")
}

// FormatAnswer returns the answer a well-behaved model gives for diff: one
// fenced block with info string "diff", its fence longer than any run of
// backticks in diff. A diff that does not end in a newline gets one.
// ParseAnswer(FormatAnswer(d)) returns d for every unified diff d that ends
// in "\n".
func FormatAnswer(diff []byte) string {
	fence := fenceFor(diff)
	var b strings.Builder
	b.Grow(len(diff) + 2*len(fence) + 8)
	b.WriteString(fence)
	b.WriteString("diff\n")
	b.Write(diff)
	if len(diff) > 0 && diff[len(diff)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	b.WriteByte('\n')
	return b.String()
}
