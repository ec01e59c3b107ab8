package cassettes

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Media types a response without a Content-Type is served with when its
// body evidently has one.
const (
	mediaJSON   = "application/json"
	mediaSSE    = "text/event-stream"
	mediaNDJSON = "application/x-ndjson"
)

// sniffMedia returns the media type a response body evidently has, or ""
// when it is none of JSON, a server-sent-events stream or newline-delimited
// JSON. Some recorders delete every header, and SDKs refuse a JSON answer
// without its type; the body alone decides, never the request.
func sniffMedia(body string) string {
	trimmed := strings.TrimSpace(body)
	if trimmed == "" {
		return ""
	}
	if isSSEText(strings.TrimLeft(body, " \t\r\n")) {
		return mediaSSE
	}
	if (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid([]byte(trimmed)) {
		return mediaJSON
	}
	if isNDJSON(trimmed) {
		return mediaNDJSON
	}
	return ""
}

// isSSEText reports whether s starts with a server-sent-events field
// line (data, event, id or retry, or a comment) and holds a frame end.
func isSSEText(s string) bool {
	first, _, _ := strings.Cut(s, "\n")
	first = strings.TrimSuffix(first, "\r")
	field, _, _ := strings.Cut(first, ":")
	switch {
	case strings.HasPrefix(first, ":"):
	case strings.Contains(first, ":") && (field == "data" || field == "event" || field == "id" || field == "retry"):
	default:
		return false
	}
	return frameEnd(s, 0) < len(s) || strings.HasSuffix(s, "\n")
}

// isNDJSON reports whether every non-empty line of s is one JSON object
// and there are at least two.
func isNDJSON(s string) bool {
	n := 0
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line[0] != '{' || !json.Valid([]byte(line)) {
			return false
		}
		n++
	}
	return n >= 2
}

// inferredNotes says, in one line, which media types were inferred for
// how many of a cassette's responses, or nothing when none was.
func inferredNotes(path string, resps []respTemplate) []string {
	counts := map[string]int{}
	for _, t := range resps {
		if t.inferred != "" {
			counts[t.inferred]++
		}
	}
	if len(counts) == 0 {
		return nil
	}
	types := make([]string, 0, len(counts))
	total := 0
	for mt, n := range counts {
		types = append(types, fmt.Sprintf("%s (%d)", mt, n))
		total += n
	}
	slices.Sort(types)
	return []string{fmt.Sprintf("cassettes: %s: %d responses recorded without a Content-Type are served as their bodies evidently are: %s",
		path, total, strings.Join(types, ", "))}
}
