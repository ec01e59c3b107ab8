package prompt

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	pf "github.com/codegenie/codegenie/internal/promptformat"
)

// canonical validates in and returns its canonical form (see Builder.Canonical).
func canonical(lim Limits, in Input) (Input, error) {
	a := in.Advisory
	if strings.TrimSpace(a.ID) == "" {
		return Input{}, &InputError{Field: "Advisory.ID", Err: ErrEmptyAdvisory,
			Fix: "set the advisory ID (e.g. \"GHSA-35jh-r3h4-6jhm\")"}
	}
	if strings.TrimSpace(a.Summary) == "" && strings.TrimSpace(a.Details) == "" {
		return Input{}, &InputError{Field: "Advisory.Summary", Err: ErrEmptyAdvisory,
			Fix: "set the advisory Summary or Details so the model knows what to fix"}
	}
	if len(in.Files) == 0 {
		return Input{}, &InputError{Field: "Files", Err: ErrNoFiles,
			Fix: "pass at least one repository file (e.g. the manifest that pins the vulnerable package)"}
	}

	files, err := canonicalFiles(lim, in.Files)
	if err != nil {
		return Input{}, err
	}
	out := Input{Advisory: a, Files: files}

	out.Recipe.Recipe = in.Recipe.Recipe
	if len(in.Recipe.Params) > 0 {
		out.Recipe.Params = maps.Clone(in.Recipe.Params)
	}

	if len(in.Examples) > 0 {
		ex := make([]Example, len(in.Examples))
		for i, e := range in.Examples {
			q, ok := quantize(e.Score)
			if !ok {
				return Input{}, &InputError{Field: fmt.Sprintf("Examples[%d].Score", i),
					Err: fmt.Errorf("%w: %v", ErrInvalidScore, e.Score),
					Fix: "pass the retriever's similarity score (finite, within ±MaxScore)"}
			}
			e.Score = q
			ex[i] = e
		}
		slices.SortFunc(ex, compareExamples)
		out.Examples = ex
	}

	if len(in.Attempts) > 0 {
		at := slices.Clone(in.Attempts)
		for i, x := range at {
			if x.Attempt < 1 {
				return Input{}, &InputError{Field: fmt.Sprintf("Attempts[%d].Attempt", i),
					Err: fmt.Errorf("%w: %d", ErrInvalidAttempt, x.Attempt),
					Fix: "number attempts from 1"}
			}
		}
		slices.SortFunc(at, compareAttempts)
		out.Attempts = at
	}
	return out, nil
}

// canonicalFiles validates the files against lim and returns them sorted by
// path, empty contents as nil.
func canonicalFiles(lim Limits, fs []File) ([]File, error) {
	files := make([]File, len(fs))
	total := 0
	for i, f := range fs {
		field := fmt.Sprintf("Files[%d]", i)
		if err := checkPath(f.Path); err != nil {
			return nil, &InputError{Field: field + ".Path", Path: f.Path, Err: err,
				Fix: "use a clean slash-separated path relative to the repository root, e.g. \"pkg/go.mod\""}
		}
		if n := len(f.Content); n > lim.maxFile() {
			return nil, &InputError{Field: field + ".Content", Path: f.Path,
				Err: fmt.Errorf("%w: %d bytes, limit %d", ErrFileTooLarge, n, lim.maxFile()),
				Fix: "leave the file out, show an excerpt, or raise Builder.Limits.MaxFileBytes"}
		}
		total += len(f.Content)
		if len(f.Content) == 0 {
			f.Content = nil
		}
		files[i] = f
	}
	if total > lim.maxTotal() {
		return nil, &InputError{Field: "Files",
			Err: fmt.Errorf("%w: %d bytes, limit %d", ErrTotalTooLarge, total, lim.maxTotal()),
			Fix: "show fewer files or raise Builder.Limits.MaxTotalBytes"}
	}
	slices.SortFunc(files, func(x, y File) int { return strings.Compare(x.Path, y.Path) })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, &InputError{Field: "Files", Path: files[i].Path, Err: ErrDuplicatePath,
				Fix: "pass each file once"}
		}
	}
	return files, nil
}

// checkPath reports why p is not an acceptable file path, or nil.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty", ErrInvalidPath)
	case !utf8.ValidString(p):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidPath)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: contains a control character", ErrInvalidPath)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w: absolute", ErrInvalidPath)
	case p == "." || !fs.ValidPath(p):
		return fmt.Errorf("%w: not clean (empty, \".\" or \"..\" element, or trailing slash)", ErrInvalidPath)
	}
	return nil
}

// quantize rounds s to ScoreDecimals decimals; ok is false for NaN and
// magnitudes above MaxScore. Negative zero becomes zero.
func quantize(s float64) (q float64, ok bool) {
	const scale = 1e4 // 10^ScoreDecimals
	if math.IsNaN(s) || math.Abs(s) > MaxScore {
		return 0, false
	}
	q = math.Round(float64(s*scale)) / scale
	if math.IsNaN(q) || math.Abs(q) > MaxScore {
		return 0, false
	}
	if q == 0 {
		q = 0
	}
	return q, true
}

// compareExamples is rank order: Score descending, then ID ascending, then
// the remaining fields so that the order is total.
func compareExamples(x, y Example) int {
	if c := cmp.Compare(y.Score, x.Score); c != 0 {
		return c
	}
	return cmp.Or(
		strings.Compare(x.ID, y.ID),
		strings.Compare(x.Ecosystem, y.Ecosystem),
		strings.Compare(x.Package, y.Package),
		strings.Compare(x.Band, y.Band),
		strings.Compare(x.Advisory, y.Advisory),
		strings.Compare(x.Fix, y.Fix),
	)
}

// compareAttempts orders by Attempt, then the remaining fields.
func compareAttempts(x, y AttemptSummary) int {
	return cmp.Or(
		cmp.Compare(x.Attempt, y.Attempt),
		strings.Compare(x.Recipe, y.Recipe),
		strings.Compare(x.Outcome, y.Outcome),
		strings.Compare(x.Error, y.Error),
	)
}

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
	longest, run := 0, 0
	for _, c := range body {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
