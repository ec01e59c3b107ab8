package review

import (
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/excerpt"
)

// maxAttention bounds the lines of the list a review's Markdown leads
// with; the rest are counted.
const maxAttention = 12

// maxAttentionLine bounds one of them, in bytes.
const maxAttentionLine = 240

// attention lists what a reviewer must look at first, one line an
// interaction that drifted, most severe first (error, schema, removed,
// new, content, timing), then in cassette and file order: what changed
// in words, with the changed request fields, answers, tool calls and
// stop reasons named.
func (r *Review) attention() []string {
	type item struct {
		class Class
		line  string
	}
	var items []item
	for _, c := range r.Cassettes {
		for i, in := range c.Interactions {
			if in.Drift == Unchanged {
				continue
			}
			items = append(items, item{in.Drift, fmt.Sprintf("%s #%d (%s %s): %s", code(c.File), i+1, plain(in.Method), code(in.URL), whatChanged(in))})
		}
	}
	slices.SortStableFunc(items, func(a, b item) int { return slices.Index(severity, b.class) - slices.Index(severity, a.class) })
	var out []string
	for i, it := range items {
		if i == maxAttention {
			out = append(out, fmt.Sprintf("… and %d more drifted interactions (below, and in the JSON review)", len(items)-i))
			break
		}
		out = append(out, it.line)
	}
	return out
}

// whatChanged says in Markdown how in drifted, the facts from cassettes
// in code spans.
func whatChanged(in Interaction) string {
	switch in.Drift {
	case Error, Schema:
		return string(in.Drift) + ": " + codeLines(in.Why)
	case Removed:
		return "no longer sent (removed)"
	case New:
		return "a new request"
	case timingChange:
		return "timing only: " + codeLines(in.Why)
	}
	var parts []string
	if n := len(in.RequestDiff); n > 0 {
		p := "the request changed: " + code(capLine(in.RequestDiff[0]))
		if n > 1 {
			p += fmt.Sprintf(" (and %d more)", n-1)
		}
		parts = append(parts, p)
	}
	m0, m1 := in.Before, in.After
	if len(in.TextDiff) > 0 {
		parts = append(parts, "the answer's text changed")
	}
	if m0 != nil && m1 != nil {
		if toolCallsText(m0, m1) != "" {
			parts = append(parts, "its tool calls changed")
		}
		if m0.StopReason != m1.StopReason {
			parts = append(parts, fmt.Sprintf("stop reason %s → %s", code(capLine(orNone(m0.StopReason))), code(capLine(orNone(m1.StopReason)))))
		}
		if m0.Usage != m1.Usage {
			parts = append(parts, fmt.Sprintf("tokens in %s, out %s", arrow(m0.Usage.Input, m1.Usage.Input), arrow(m0.Usage.Output, m1.Usage.Output)))
		}
	}
	if len(parts) == 0 {
		return "the response changed (ids, counts or chunking; the answer reads the same)"
	}
	return strings.Join(parts, "; ")
}

// codeLines renders facts as code spans, each cut to maxAttentionLine.
func codeLines(facts []string) string {
	parts := make([]string, len(facts))
	for i, f := range facts {
		parts[i] = code(capLine(f))
	}
	return strings.Join(parts, "; ")
}

// capLine cuts s to maxAttentionLine bytes at a rune boundary.
func capLine(s string) string {
	if h := excerpt.Head(s, maxAttentionLine); len(h) < len(s) {
		return h + "…"
	}
	return s
}
