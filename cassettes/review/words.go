package review

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codegenie/codegenie/internal/excerpt"
)

// Span is one piece of a word-level diff: Op is "=" (in both texts), "-"
// (only in the old one) or "+" (only in the new one). Concatenating the
// "=" and "-" spans gives the old text, the "=" and "+" spans the new,
// but for elisions.
//
// A long "=" span keeps only its first and last ContextBytes bytes (cut
// at rune boundaries) joined by "…"; Elided counts the bytes left out.
type Span struct {
	Op     string `json:"op"`
	Text   string `json:"text"`
	Elided int    `json:"elided,omitempty"`
}

// ContextBytes is how much of an unchanged stretch a word diff keeps on
// each side of an elision.
const ContextBytes = 160

// maxDiffCells bounds the table of the word diff (old words times new
// words, after the common head and tail are set aside): past it, the
// differing middle is shown as removed and added whole.
const maxDiffCells = 1 << 21

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

// wordDiff is the word-level diff of a and b (nil when equal). coarse
// reports that the texts differed too much to align word by word within
// maxDiffCells.
func wordDiff(a, b string) (spans []Span, coarse bool) {
	if a == b {
		return nil, false
	}
	wa, wb := words(a), words(b)
	head := 0
	for head < len(wa) && head < len(wb) && wa[head] == wb[head] {
		head++
	}
	tail := 0
	for tail < len(wa)-head && tail < len(wb)-head && wa[len(wa)-1-tail] == wb[len(wb)-1-tail] {
		tail++
	}
	d := &spanBuilder{}
	d.add("=", wa[:head]...)
	ma, mb := wa[head:len(wa)-tail], wb[head:len(wb)-tail]
	if len(ma)*len(mb) > maxDiffCells {
		coarse = true
		d.add("-", ma...)
		d.add("+", mb...)
	} else {
		lcsDiff(d, ma, mb)
	}
	d.add("=", wa[len(wa)-tail:]...)
	return d.result(), coarse
}

// lcsDiff appends the diff of a and b along a longest common subsequence
// of words, removals before additions at each change.
func lcsDiff(d *spanBuilder, a, b []string) {
	n, m := len(a), len(b)
	// l[i*(m+1)+j] is the LCS length of a[i:] and b[j:].
	l := make([]int32, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				l[i*(m+1)+j] = l[(i+1)*(m+1)+j+1] + 1
			default:
				l[i*(m+1)+j] = max(l[(i+1)*(m+1)+j], l[i*(m+1)+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			d.add("=", a[i])
			i, j = i+1, j+1
		case j == m || i < n && l[(i+1)*(m+1)+j] >= l[i*(m+1)+j+1]:
			d.add("-", a[i])
			i++
		default:
			d.add("+", b[j])
			j++
		}
	}
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
		if s.Op == "=" && len(s.Text) > 3*ContextBytes {
			head := excerpt.Head(s.Text, ContextBytes)
			tail := tailOf(s.Text, ContextBytes)
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
