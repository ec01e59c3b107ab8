package prompt

import (
	"bytes"
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pf "github.com/codegenie/codegenie/internal/promptformat"
)

// render writes the User text of a canonical Input (see the package doc,
// "User text"); the fixed lines come from promptformat.
func render(in Input) string {
	var w writer
	w.b.Grow(renderSize(in))
	a := in.Advisory
	w.line(pf.HTask)
	w.line(pf.TaskLine)
	w.line("")
	w.line(pf.HAdvisory)
	w.field(pf.FieldID, a.ID)
	w.field(pf.FieldEcosystem, a.Ecosystem)
	w.field(pf.FieldPackage, a.Package)
	w.field(pf.FieldVulnerableRange, a.VulnerableRange)
	w.field(pf.FieldFixedVersion, a.FixedVersion)
	w.line("")
	w.line(pf.HSummary)
	w.block(pf.LangText, []byte(a.Summary))
	w.line("")
	w.line(pf.HDetails)
	w.block(pf.LangText, []byte(a.Details))
	w.line("")

	w.line(pf.HRecipe)
	w.field(pf.FieldRecipe, in.Recipe.Recipe)
	for _, k := range slices.Sorted(maps.Keys(in.Recipe.Params)) {
		w.line(pf.ParamPrefix + strconv.Quote(k) + ": " + strconv.Quote(in.Recipe.Params[k]))
	}
	w.line("")

	w.line(pf.HFiles + " (" + strconv.Itoa(len(in.Files)) + ")")
	w.line("")
	for _, f := range in.Files {
		w.line(pf.HFile + strconv.Quote(f.Path))
		w.block(pf.LangText, f.Content)
		w.line("")
	}

	if len(in.Examples) > 0 {
		w.line(pf.HExamples + " (" + strconv.Itoa(len(in.Examples)) + ")")
		w.line(pf.ExamplesLine)
		w.line("")
		for i, e := range in.Examples {
			w.line(pf.HExample + strconv.Itoa(i+1))
			w.field(pf.FieldID, e.ID)
			w.field(pf.FieldEcosystem, e.Ecosystem)
			w.field(pf.FieldPackage, e.Package)
			w.line(pf.ScorePrefix + strconv.FormatFloat(e.Score, 'f', ScoreDecimals, 64))
			w.field(pf.FieldBand, e.Band)
			w.line(pf.HExampleAdvisory)
			w.block(pf.LangText, []byte(e.Advisory))
			w.line(pf.HExampleFix)
			w.block(pf.LangDiff, []byte(e.Fix))
			w.line("")
		}
	}

	if len(in.Attempts) > 0 {
		w.line(pf.HAttempts + " (" + strconv.Itoa(len(in.Attempts)) + ")")
		w.line(pf.AttemptsLine)
		w.line("")
		for _, x := range in.Attempts {
			w.line(pf.HAttempt + strconv.Itoa(x.Attempt))
			w.field(pf.FieldRecipe, x.Recipe)
			w.field(pf.FieldOutcome, x.Outcome)
			w.line(pf.HAttemptError)
			w.block(pf.LangText, []byte(x.Error))
			w.line("")
		}
	}

	w.line(pf.HAnswer)
	w.line(pf.AnswerLine)
	return w.b.String()
}

// renderSize estimates len(render(in)) (block bodies plus room for the
// fixed text) so the builder allocates once for a typical prompt.
func renderSize(in Input) int {
	n := 2048 + len(in.Advisory.Summary) + len(in.Advisory.Details)
	for _, f := range in.Files {
		n += 64 + len(f.Path) + len(f.Content)
	}
	for _, e := range in.Examples {
		n += 256 + len(e.Advisory) + len(e.Fix)
	}
	for _, x := range in.Attempts {
		n += 128 + len(x.Recipe) + len(x.Error)
	}
	return n
}

type writer struct{ b strings.Builder }

func (w *writer) line(s string) {
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// field writes "- name: "quoted"".
func (w *writer) field(name, v string) {
	w.line("- " + name + ": " + strconv.Quote(v))
}

// block writes content as a fenced block (see the package doc, "Blocks").
func (w *writer) block(lang string, content []byte) {
	body := content
	if isBinary(content) {
		lang = pf.LangBase64
		body = encodeBase64(content)
	}
	fence := fenceFor(body)
	info := lang + " " + pf.BytesPrefix + strconv.Itoa(len(body))
	noEOL := len(body) > 0 && body[len(body)-1] != '\n'
	if noEOL {
		info += " " + pf.NoEOL
	}
	w.line(fence + info)
	w.b.Write(body)
	if noEOL {
		w.b.WriteByte('\n')
	}
	w.line(fence)
}

// isBinary reports whether b must be shown base64-encoded: it is not valid
// UTF-8 or holds a NUL byte.
func isBinary(b []byte) bool {
	return !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0
}

const base64Line = 76

// encodeBase64 is standard padded base64 in lines of 76 characters, each
// ending in "\n".
func encodeBase64(b []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(b)
	out := make([]byte, 0, len(enc)+len(enc)/base64Line+1)
	for len(enc) > base64Line {
		out = append(out, enc[:base64Line]...)
		out = append(out, '\n')
		enc = enc[base64Line:]
	}
	out = append(out, enc...)
	return append(out, '\n')
}

// fenceFor returns a run of backticks one longer than the longest run in
// body, and at least three long.
func fenceFor(body []byte) string {
	longest := 0
	for i := bytes.IndexByte(body, '`'); i >= 0; {
		j := i + 1
		for j < len(body) && body[j] == '`' {
			j++
		}
		longest = max(longest, j-i)
		next := bytes.IndexByte(body[j:], '`')
		if next < 0 {
			break
		}
		i = j + next
	}
	return strings.Repeat("`", max(3, longest+1))
}
