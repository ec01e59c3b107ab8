package review

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codegenie/codegenie/internal/excerpt"
)

// WriteJSON writes r as indented JSON (the format is specified in the
// package documentation).
func (r *Review) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// maxDiffRender bounds the rendering of one word diff, in bytes.
const maxDiffRender = 4000

// Markdown writes r as Markdown fit for a pull-request comment: a summary,
// a table of cassettes, the golden files that will move with the command
// that refreshes them, then every interaction that is not Unchanged. It
// is at most Config.MaxMarkdown bytes: the interactions that do not fit
// are counted, and the JSON form has them all.
func (r *Review) Markdown(w io.Writer) error {
	limit := r.maxMarkdown
	if limit <= 0 {
		limit = defaultMaxMarkdown
	}
	var b mdBuilder
	b.limit = limit - 200 // room for the closing line
	r.writeHead(&b)
	omitted := 0
	for _, c := range r.Cassettes {
		if c.Drift == Unchanged {
			continue
		}
		head := fmt.Sprintf("\n#### %s: %s, drift %s\n", code(c.File), c.label(), c.Drift)
		if c.OldDigest != "" && c.OldDigest != c.NewDigest {
			head += fmt.Sprintf("\nDigest %s → %s.\n", code(short(c.OldDigest)), code(short(c.NewDigest)))
		}
		headWritten := false
		for i, in := range c.Interactions {
			if in.Drift == Unchanged {
				continue
			}
			section := interactionMarkdown(i+1, in)
			if !headWritten {
				section = head + section
			}
			if !b.fits(section) {
				omitted++
				continue
			}
			b.WriteString(section)
			headWritten = true
		}
	}
	if omitted > 0 {
		fmt.Fprintf(&b.Builder, "\n_%d more drifted interactions are not shown here (size limit); the JSON review lists them all._\n", omitted)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdBuilder is a strings.Builder with a size budget.
type mdBuilder struct {
	strings.Builder
	limit int
}

func (b *mdBuilder) fits(s string) bool { return b.Len()+len(s) <= b.limit }

// writeLine writes s if it fits, and reports whether it did.
func (b *mdBuilder) writeLine(s string) bool {
	if !b.fits(s) {
		return false
	}
	b.WriteString(s)
	return true
}

func (r *Review) writeHead(b *mdBuilder) {
	total := sum(r.Counts)
	verdict := "no drift"
	if r.Drifted {
		verdict = "**drifted**"
	}
	fmt.Fprintf(&b.Builder, "### Cassette review: %s\n\n", verdict)
	if look := r.attention(); len(look) > 0 {
		b.WriteString("**Look at first:**\n\n")
		for _, l := range look {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b.Builder, "%d cassettes, %d interactions: %s.\n\n", len(r.Cassettes), total, r.countsText())
	fmt.Fprintf(&b.Builder, "Tokens in %s, out %s; cost %s → %s (%s %s, prices %s).\n",
		arrow(r.Before.Input, r.After.Input), arrow(r.Before.Output, r.After.Output),
		money(r.Cost.Before), money(r.Cost.After), signedMoney(r.Cost.Delta), r.Currency, plain(r.Prices))
	if len(r.Cost.Unpriced) > 0 {
		fmt.Fprintf(&b.Builder, "No price for %s (counted as 0).\n", codes(r.Cost.Unpriced))
	}
	if len(r.Cost.Unconfirmed) > 0 {
		fmt.Fprintf(&b.Builder, "Unconfirmed price for %s: not checked against the provider's published pricing page (the price table says why).\n", codes(r.Cost.Unconfirmed))
	}
	b.WriteString("\n| cassette | status | drift | interactions | tokens in | tokens out | cost |\n|---|---|---|---|---|---|---|\n")
	rows := 0
	for _, c := range r.Cassettes {
		counts := map[Class]int{}
		for _, in := range c.Interactions {
			counts[in.Drift]++
		}
		row := fmt.Sprintf("| %s | %s | %s | %d (%s) | %s | %s | %s |\n", code(c.File), c.label(), c.Drift,
			len(c.Interactions), countsOf(counts), arrow(c.Before.Input, c.After.Input), arrow(c.Before.Output, c.After.Output),
			signedMoney(c.Cost.Delta))
		if !b.writeLine(row) {
			break
		}
		rows++
	}
	if rows < len(r.Cassettes) {
		fmt.Fprintf(&b.Builder, "\n_%d more cassettes are not shown here (size limit)._\n", len(r.Cassettes)-rows)
	}
	if len(r.Goldens) > 0 {
		fmt.Fprintf(&b.Builder, "\n**%d golden files will move:**\n\n", len(r.Goldens))
		for i, g := range r.Goldens {
			if !b.writeLine(fmt.Sprintf("- %s (pins %s)\n", code(g.Path), codes(g.Cassettes))) {
				fmt.Fprintf(&b.Builder, "- … and %d more\n", len(r.Goldens)-i)
				break
			}
		}
		if r.GoldenCommand != "" {
			b.WriteString("\nRefresh them with:\n\n" + fence(r.GoldenCommand, "sh"))
		}
	}
}

func (r *Review) countsText() string { return countsOf(r.Counts) }

// countsOf lists the non-zero counts by class, in order of severity.
func countsOf(counts map[Class]int) string {
	var parts []string
	for _, cl := range severity {
		if n := counts[cl]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+string(cl))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// interactionMarkdown renders one drifted interaction (n is 1-based).
func interactionMarkdown(n int, in Interaction) string {
	var b strings.Builder
	lines := ""
	switch {
	case in.OldLine > 0 && in.NewLine > 0:
		lines = fmt.Sprintf("lines %d → %d", in.OldLine, in.NewLine)
	case in.NewLine > 0:
		lines = fmt.Sprintf("line %d", in.NewLine)
	default:
		lines = fmt.Sprintf("old line %d", in.OldLine)
	}
	fmt.Fprintf(&b, "\n**%d. %s %s**: %s, %s (%s)\n\n", n, in.Method, code(in.URL), in.Change, in.Drift, lines)
	for _, w := range in.Why {
		fmt.Fprintf(&b, "- %s\n", code(w))
	}
	m0, m1 := in.Before, in.After
	switch {
	case m0 != nil && m1 != nil:
		if m0.StopReason != m1.StopReason {
			fmt.Fprintf(&b, "- stop reason %s → %s\n", code(orNone(m0.StopReason)), code(orNone(m1.StopReason)))
		}
		fmt.Fprintf(&b, "- tokens in %s, out %s; cost %s\n", arrow(m0.Usage.Input, m1.Usage.Input), arrow(m0.Usage.Output, m1.Usage.Output), costArrow(in.Cost))
		if t0, t1 := m0.Timing, m1.Timing; t0 != nil && t1 != nil && *t0 != *t1 {
			fmt.Fprintf(&b, "- frames arrived: first at %s ms, last at %s ms\n", arrow(t0.FirstFrameMS, t1.FirstFrameMS), arrow(t0.LastFrameMS, t1.LastFrameMS))
		}
	case m1 != nil:
		fmt.Fprintf(&b, "- status %d, stop reason %s, tokens in %d, out %d\n", m1.Status, code(orNone(m1.StopReason)), m1.Usage.Input, m1.Usage.Output)
	case m0 != nil:
		fmt.Fprintf(&b, "- was: status %d, stop reason %s, tokens in %d, out %d\n", m0.Status, code(orNone(m0.StopReason)), m0.Usage.Input, m0.Usage.Output)
	}
	if len(in.RequestDiff) > 0 {
		b.WriteString("\nRequest (old != new):\n\n" + fence(capText(strings.Join(in.RequestDiff, "\n"), maxDiffRender), ""))
	}
	switch {
	case len(in.TextDiff) > 0:
		b.WriteString("\nAnswer, word diff ([-old-]{+new+}):\n\n" + fence(renderSpans(in.TextDiff), ""))
	case m0 == nil && m1 != nil && m1.Text != "":
		b.WriteString("\nAnswer:\n\n" + fence(capText(m1.Text, maxDiffRender), ""))
	}
	if calls := toolCallsText(m0, m1); calls != "" {
		b.WriteString("\nTool calls:\n\n" + fence(calls, ""))
	}
	return b.String()
}

// toolCallsText renders tool calls that differ (or are new).
func toolCallsText(m0, m1 *Message) string {
	render := func(m *Message) string {
		if m == nil {
			return ""
		}
		var parts []string
		for _, c := range m.ToolCalls {
			parts = append(parts, c.Name+"("+c.Arguments+")")
		}
		return strings.Join(parts, "\n")
	}
	a, c := render(m0), render(m1)
	switch {
	case a == c:
		return ""
	case a == "":
		return capText("+ "+strings.ReplaceAll(c, "\n", "\n+ "), maxDiffRender)
	case c == "":
		return capText("- "+strings.ReplaceAll(a, "\n", "\n- "), maxDiffRender)
	}
	return capText("- "+strings.ReplaceAll(a, "\n", "\n- ")+"\n+ "+strings.ReplaceAll(c, "\n", "\n+ "), maxDiffRender)
}

// renderSpans renders a word diff as git's plain word diff does.
func renderSpans(spans []Span) string {
	var b strings.Builder
	for _, s := range spans {
		switch s.Op {
		case "-":
			b.WriteString("[-" + s.Text + "-]")
		case "+":
			b.WriteString("{+" + s.Text + "+}")
		default:
			b.WriteString(s.Text)
		}
	}
	return capText(b.String(), maxDiffRender)
}

func capText(s string, n int) string {
	if h := excerpt.Head(s, n); len(h) < len(s) {
		return h + "\n… (" + strconv.Itoa(len(s)-len(h)) + " more bytes in the JSON review)"
	}
	return s
}

// fence puts s in a fenced code block whose fence is longer than any run
// of backticks in s.
func fence(s, lang string) string {
	s = printable(s)
	f := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n"
}

// printable escapes what a terminal or a Markdown renderer would act on
// in a code block: control characters but newline and tab (as \xNN or
// \u{NNNN}) and invalid UTF-8 (as \xNN).
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, "\\u{%04x}", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// code renders s as an inline code span on one line.
func code(s string) string {
	s = oneLine(s)
	f := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return f + " " + s + " " + f
	}
	return f + s + f
}

func codes(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = code(s)
	}
	return strings.Join(parts, ", ")
}

// oneLine returns s if every rune of it is printable, else s quoted as
// excerpt.Quote does (a Go string literal).
func oneLine(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) || !utf8.ValidString(s) {
		return excerpt.Quote(s)
	}
	return s
}

// plain renders s on one line with the characters Markdown acts on
// inline escaped.
func plain(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

func short(digest string) string { return excerpt.Head(digest, 12) }

func arrow(a, b int64) string {
	if a == b {
		return strconv.FormatInt(a, 10)
	}
	return fmt.Sprintf("%d → %d (%+d)", a, b, b-a)
}

func costArrow(c Cost) string {
	unconfirmed := ""
	if len(c.Unconfirmed) > 0 {
		unconfirmed = ", at an unconfirmed price"
	}
	if c.Before == c.After {
		return money(c.After) + " (unchanged" + unconfirmed + ")"
	}
	return money(c.Before) + " → " + money(c.After) + " (" + signedMoney(c.After-c.Before) + unconfirmed + ")"
}

// money renders micro-units with six decimals.
func money(micro int64) string {
	sign := ""
	if micro < 0 {
		sign, micro = "-", -micro
	}
	return fmt.Sprintf("%s%d.%06d", sign, micro/1_000_000, micro%1_000_000)
}

func signedMoney(micro int64) string {
	if micro >= 0 {
		return "+" + money(micro)
	}
	return money(micro)
}
