package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/cassettes"
)

// setMisses gives a run whose error is a cassette miss the text of its
// misses (missText) as its error, and the kind errorKindCredentials when
// one of them asked a cloud credential or metadata service, or
// errorKindAPIVersion when each differs from its recording only in the
// API version its SDK sends.
func (o *outcome) setMisses(ms []*cassettes.MissError) {
	if o.errKind != ErrorKindCassetteMiss || len(ms) == 0 {
		return
	}
	o.errText = maskText(missText(ms))
	switch {
	case slices.ContainsFunc(ms, func(m *cassettes.MissError) bool { return m.Credentials != "" }):
		o.errKind = errorKindCredentials
	case !slices.ContainsFunc(ms, func(m *cassettes.MissError) bool { return !m.APIVersion }):
		o.errKind = errorKindAPIVersion
	}
}

// missText renders a run's misses: each change (MissError.Change) once,
// in the order of their texts, told by what the change covers alone
// (what missed and how it differs from its recording, never which
// interaction was nearest or how many requests carried it), so that runs
// whose misses one change explains read the same whichever concurrent
// request missed first. It advises nothing: the report names the command
// to run next, once.
func missText(ms []*cassettes.MissError) string {
	seen := map[string]bool{}
	var texts []string
	for _, m := range ms {
		if seen[m.Change()] {
			continue
		}
		seen[m.Change()] = true
		texts = append(texts, missLine(m))
	}
	slices.Sort(texts)
	return strings.Join(texts, "\n")
}

// missLine renders one change of a miss (see missText).
func missLine(m *cassettes.MissError) string {
	switch {
	case m.Credentials != "":
		return fmt.Sprintf("missed: %s", m.Credentials)
	case m.Exhausted:
		return fmt.Sprintf("%s %s found %s used up: every recorded interaction was already replayed in this run", m.Method, m.URL, m.Cassette)
	case m.Served > 0:
		return fmt.Sprintf("%s %s was sent more often than when %s was recorded: all %d recorded interactions with this request were already replayed", m.Method, m.URL, m.Cassette, m.Served)
	case m.APIVersion:
		return fmt.Sprintf("requests to %s differ from their recordings only in the API version their SDK sends: %s", m.Cassette, versionText(m))
	case m.Nearest < 0:
		return fmt.Sprintf("%s %s missed %s, which has no interactions", m.Method, m.URL, m.Cassette)
	}
	var fields []string
	for _, d := range m.Diff[:min(len(m.Diff), maxFieldsNamed)] {
		fields = append(fields, d.Field)
	}
	if len(m.Diff) > maxFieldsNamed {
		fields = append(fields, fmt.Sprintf("%d more", len(m.Diff)-maxFieldsNamed))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s missed %s: it differs from its nearest recorded interaction in %s (recorded != requested)", m.Method, m.URL, m.Cassette, strings.Join(fields, ", "))
	for i, d := range m.Diff {
		if i == maxRequestDiff {
			fmt.Fprintf(&b, "\n  ... and %d more differences", len(m.Diff)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s != %s", d.Field, d.Recorded, d.Requested)
	}
	return b.String()
}

// maxFieldsNamed bounds the differing fields the first line of a miss
// names.
const maxFieldsNamed = 3

// versionText says what an API-version miss changed, the same for every
// request it covers: the version headers with both values, and that the
// URL's version changed (each endpoint's URL is its own).
func versionText(m *cassettes.MissError) string {
	var parts []string
	url := false
	for _, d := range m.Diff {
		if d.Field == "url" {
			url = true
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s != %s", d.Field, d.Recorded, d.Requested))
	}
	if url {
		parts = append(parts, "the version in the URL (a path segment such as v1beta, or a beta parameter)")
	}
	return strings.Join(parts, ", ")
}
