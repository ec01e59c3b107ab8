package fakellm

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/codegenie/codegenie/prompt"
)

// change is one manifest edit.
type change struct {
	path          string
	before, after string
}

// bump edits every manifest of in.Files that pins the advisory's package,
// in path order (promptparse.Parse returns files in path order). It returns
// nil when no manifest pins it (or every pin is already at the fixed
// version).
func bump(in prompt.Input) []change {
	a := in.Advisory
	if a.Package == "" || a.FixedVersion == "" {
		return nil
	}
	var out []change
	for _, f := range in.Files {
		var edit func(line string) (string, bool)
		switch kind := manifestKind(f.Path); {
		case kind == "npm" && ecosystemIs(a.Ecosystem, "npm"):
			edit = npmEdit(a.Package, a.FixedVersion)
		case kind == "go" && ecosystemIs(a.Ecosystem, "go"):
			edit = goModEdit(a.Package, a.FixedVersion)
		case kind == "pypi" && ecosystemIs(a.Ecosystem, "pypi"):
			edit = pipEdit(a.Package, a.FixedVersion)
		default:
			continue
		}
		before := string(f.Content)
		if after, changed := editLines(before, edit); changed {
			out = append(out, change{path: f.Path, before: before, after: after})
		}
	}
	return out
}

// manifestKind classifies a path by its base name.
func manifestKind(p string) string {
	base := path.Base(p)
	switch {
	case base == "package.json":
		return "npm"
	case base == "go.mod":
		return "go"
	case strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
		return "pypi"
	}
	return ""
}

// ecosystemIs reports whether the advisory's ecosystem names kind; an
// unknown or empty ecosystem matches every kind.
func ecosystemIs(eco, kind string) bool {
	switch strings.ToLower(strings.TrimSpace(eco)) {
	case "npm", "node", "javascript":
		return kind == "npm"
	case "go", "golang":
		return kind == "go"
	case "pypi", "pip", "python":
		return kind == "pypi"
	}
	return true
}

// editLines applies edit to every line of s (without its line ending) and
// reports whether any line changed. Line endings are kept as they are.
func editLines(s string, edit func(string) (string, bool)) (string, bool) {
	var b strings.Builder
	changed := false
	for _, line := range strings.SplitAfter(s, "\n") {
		body, eol := splitEOL(line)
		if nl, ok := edit(body); ok && nl != body {
			body = nl
			changed = true
		}
		b.WriteString(body)
		b.WriteString(eol)
	}
	return b.String(), changed
}

func splitEOL(line string) (body, eol string) {
	switch {
	case strings.HasSuffix(line, "\r\n"):
		return line[:len(line)-2], "\r\n"
	case strings.HasSuffix(line, "\n"):
		return line[:len(line)-1], "\n"
	}
	return line, ""
}

var npmSpec = regexp.MustCompile(`^(\^|~|>=|=|v)?(\d[0-9A-Za-z.+-]*)$`)

// npmEdit rewrites `"pkg": "<spec>"` where spec is a plain version with an
// optional ^, ~, >=, = or v prefix, keeping the prefix. Ranges, tags, URLs
// and workspace specs are left alone.
func npmEdit(pkg, fixed string) func(string) (string, bool) {
	re := regexp.MustCompile(`^(\s*"` + regexp.QuoteMeta(pkg) + `"\s*:\s*")([^"]*)(".*)$`)
	fixed = strings.TrimPrefix(fixed, "v")
	return func(line string) (string, bool) {
		m := re.FindStringSubmatch(line)
		if m == nil {
			return line, false
		}
		sm := npmSpec.FindStringSubmatch(m[2])
		if sm == nil {
			return line, false
		}
		op := sm[1]
		if op == "v" {
			op = ""
		}
		return m[1] + op + fixed + m[3], true
	}
}

var goRequireLine = regexp.MustCompile(`^(\s*(?:require\s+)?)(\S+)(\s+)(v[^\s/]+)(.*)$`)

// goModEdit rewrites the version of module pkg in a single-line require
// directive or inside a require ( ... ) block, keeping comments such as
// "// indirect". replace and exclude directives are left alone.
func goModEdit(pkg, fixed string) func(string) (string, bool) {
	if !strings.HasPrefix(fixed, "v") {
		fixed = "v" + fixed
	}
	inRequire := false
	return func(line string) (string, bool) {
		trimmed := strings.TrimSpace(line)
		fields := strings.Fields(trimmed)
		switch {
		case len(fields) >= 2 && fields[0] == "require" && fields[1] == "(":
			inRequire = true
			return line, false
		case inRequire && strings.HasPrefix(trimmed, ")"):
			inRequire = false
			return line, false
		case !inRequire && (len(fields) == 0 || fields[0] != "require"):
			return line, false
		}
		m := goRequireLine.FindStringSubmatch(line)
		if m == nil || m[2] != pkg {
			return line, false
		}
		if inRequire && strings.HasPrefix(strings.TrimSpace(m[1]), "require") {
			return line, false
		}
		return m[1] + m[2] + m[3] + fixed + m[5], true
	}
}

var pipPin = regexp.MustCompile(`^(\s*)([A-Za-z0-9][A-Za-z0-9._-]*)(\s*\[[^\]]*\])?(\s*==\s*)([^\s;#\\,]+)(.*)$`)

// pipEdit rewrites `name==version` pins whose name matches pkg under PEP
// 503 normalisation (case-insensitive, runs of -_. equal), keeping extras,
// environment markers, hashes and comments.
func pipEdit(pkg, fixed string) func(string) (string, bool) {
	want := normalizePyName(pkg)
	return func(line string) (string, bool) {
		m := pipPin.FindStringSubmatch(line)
		if m == nil || normalizePyName(m[2]) != want {
			return line, false
		}
		return m[1] + m[2] + m[3] + m[4] + fixed + m[6], true
	}
}

var pyNameSep = regexp.MustCompile(`[-_.]+`)

func normalizePyName(s string) string {
	return pyNameSep.ReplaceAllString(strings.ToLower(s), "-")
}

// unifiedDiff renders the changes as one git-style unified diff
// ("diff --git a/p b/p", "--- a/p", "+++ b/p", hunks with 3 context lines).
func unifiedDiff(cs []change) []byte {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("diff --git a/" + c.path + " b/" + c.path + "\n")
		b.WriteString(udiff.Unified("a/"+c.path, "b/"+c.path, c.before, c.after))
	}
	return []byte(b.String())
}

// mangle returns a copy of cs whose first change's before text differs
// from the repository on the first changed line, so the diff rendered from
// it does not apply.
func mangle(cs []change) []change {
	out := slices.Clone(cs)
	c := &out[0]
	bl := strings.SplitAfter(c.before, "\n")
	al := strings.SplitAfter(c.after, "\n")
	for i := range bl {
		if i < len(al) && bl[i] != al[i] {
			body, eol := splitEOL(bl[i])
			indent := body[:len(body)-len(strings.TrimLeft(body, " \t"))]
			bl[i] = indent + "fakellm-stale " + strings.TrimLeft(body, " \t") + eol
			break
		}
	}
	c.before = strings.Join(bl, "")
	return out
}
