package prompt

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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
