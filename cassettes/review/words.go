package review

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"

	"github.com/codegenie/codegenie/internal/excerpt"
)

// Span is one piece of a word-level diff: Op is "=" (in both texts), "-"
// (only in the old one) or "+" (only in the new one). Concatenating the
// "=" and "-" spans gives the old text, the "=" and "+" spans the new,
// but for elisions.
//
// A long "=" span keeps only its first and last 160 bytes (cut
// at rune boundaries) joined by "…"; Elided counts the bytes left out.
type Span struct {
	Op     string `json:"op"`
	Text   string `json:"text"`
	Elided int    `json:"elided,omitempty"`
}

// contextBytes is how much of an unchanged stretch a word diff keeps on
// each side of an elision.
const contextBytes = 160

// words splits s into words and the runs of space between them, so that
// joining the pieces gives s back.
func words(s string) []string {
	var out []string
	for len(s) > 0 {
		r, _ := utf8.DecodeRuneInString(s)
		space := unicode.IsSpace(r)
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) != space {
				break
			}
			i += n
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// wordDiff is the word-level diff of a and b (nil when equal), along the
// common subsequence of words go-udiff's lcs package finds.
func wordDiff(a, b string) []Span {
	if a == b {
		return nil
	}
	wa, wb := words(a), words(b)
	d := &spanBuilder{}
	pos := 0
	for _, c := range lcs.DiffLines(wa, wb) {
		d.add("=", wa[pos:c.Start]...)
		d.add("-", wa[c.Start:c.End]...)
		d.add("+", wb[c.ReplStart:c.ReplEnd]...)
		pos = c.End
	}
	d.add("=", wa[pos:]...)
	return d.result()
}

// spanBuilder collects pieces with their ops; spans merges them into
// runs, "-" before "+" within each run of changes, so each change reads
// old, then new.
type spanBuilder struct{ pieces []Span }

func (d *spanBuilder) add(op string, pieces ...string) {
	for _, p := range pieces {
		d.pieces = append(d.pieces, Span{Op: op, Text: p})
	}
}

func (d *spanBuilder) result() []Span {
	var out []Span
	var same, del, ins strings.Builder
	flush := func() {
		for _, s := range []struct {
			op string
			b  *strings.Builder
		}{{"=", &same}, {"-", &del}, {"+", &ins}} {
			if s.b.Len() > 0 {
				out = append(out, Span{Op: s.op, Text: s.b.String()})
				s.b.Reset()
			}
		}
	}
	for _, p := range d.pieces {
		switch p.Op {
		case "=":
			if del.Len()+ins.Len() > 0 {
				flush()
			}
			same.WriteString(p.Text)
		case "-":
			if same.Len() > 0 {
				flush()
			}
			del.WriteString(p.Text)
		default:
			if same.Len() > 0 {
				flush()
			}
			ins.WriteString(p.Text)
		}
	}
	flush()
	for i, s := range out {
		if s.Op == "=" && len(s.Text) > 3*contextBytes {
			head := excerpt.Head(s.Text, contextBytes)
			tail := tailOf(s.Text, contextBytes)
			out[i] = Span{Op: "=", Text: head + "…" + tail, Elided: len(s.Text) - len(head) - len(tail)}
		}
	}
	return out
}

// tailOf returns at most n bytes of the end of s, cut at a rune boundary.
func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
