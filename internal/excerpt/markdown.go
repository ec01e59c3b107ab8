package excerpt

import "strings"

// MarkdownCode returns s as a Markdown code span: between runs of
// backticks one longer than the longest run in s, padded with spaces when
// s starts or ends with a backtick. A newline in s becomes a space (a code
// span is one line).
func MarkdownCode(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	ticks := strings.Repeat("`", longestRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// MarkdownFence returns text as a Markdown fenced code block of language
// lang ("" for none), ending in a newline: the fence is three backticks,
// or one more than the longest run of backticks in text, so nothing in
// text closes it.
func MarkdownFence(text, lang string) string {
	fence := strings.Repeat("`", max(3, longestRun(text)+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}

// longestRun is the length of the longest run of backticks in s.
func longestRun(s string) int {
	longest, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	return longest
}
