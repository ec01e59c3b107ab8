package secrets

import (
	"cmp"
	"slices"
	"strings"
)

// Mask returns text with every secret Scan finds, and every occurrence of
// each literal at least 8 bytes long, replaced by repl. Replacing a secret
// can join what surrounds it into something Scan takes for one (repl
// followed by a long token, after a keyword), so Mask masks its own result
// again until nothing changes, at most maxMaskPasses times: masking what
// Mask returned returns it unchanged.
func Mask(text, repl string, literals ...string) string {
	for range maxMaskPasses {
		masked := maskOnce(text, repl, literals)
		if masked == text {
			break
		}
		text = masked
	}
	return text
}

// maxMaskPasses bounds Mask's passes; each pass that changes the text
// replaced at least one more span by repl.
const maxMaskPasses = 8

// maskOnce is one pass of Mask.
func maskOnce(text, repl string, literals []string) string {
	type span struct{ start, end int }
	var spans []span
	for _, lit := range literals {
		if len(lit) < 8 {
			continue
		}
		for off := 0; ; {
			i := strings.Index(text[off:], lit)
			if i < 0 {
				break
			}
			spans = append(spans, span{off + i, off + i + len(lit)})
			off += i + len(lit)
		}
	}
	for _, f := range Scan(text) {
		spans = append(spans, span{f.Start, f.End})
	}
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Or(a.start-b.start, a.end-b.end) })
	var b strings.Builder
	pos := 0
	for _, s := range spans {
		if s.end <= pos {
			continue
		}
		if s.start > pos {
			b.WriteString(text[pos:s.start])
			b.WriteString(repl)
		} else if pos == 0 && s.start == 0 {
			b.WriteString(repl)
		}
		pos = s.end
	}
	b.WriteString(text[pos:])
	return b.String()
}
