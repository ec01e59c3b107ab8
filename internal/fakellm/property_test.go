package fakellm

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/prompt"
)

// manifestCase is a generated manifest with one pin of the target package
// among unrelated lines.
type manifestCase struct {
	adv   prompt.Advisory
	path  string
	file  string
	pinAt int    // line index of the pin
	want  string // the pin line after the bump
}

func genVersion(t *rapid.T, label string) string {
	return fmt.Sprintf("%d.%d.%d",
		rapid.IntRange(0, 30).Draw(t, label+".major"),
		rapid.IntRange(0, 30).Draw(t, label+".minor"),
		rapid.IntRange(0, 30).Draw(t, label+".patch"))
}

var genManifest = rapid.Custom(func(t *rapid.T) manifestCase {
	name := rapid.StringMatching(`[a-z][a-z0-9]{1,8}(-[a-z0-9]{1,5})?`).Draw(t, "package")
	old := genVersion(t, "old")
	fixed := genVersion(t, "fixed")
	if old == fixed {
		fixed += "1"
	}
	eol := rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(t, "eol")
	fillers := rapid.SliceOfN(rapid.StringMatching(`[a-z]{1,10}`), 0, 12).Draw(t, "fillers")
	kind := rapid.SampledFrom([]string{"npm", "Go", "PyPI"}).Draw(t, "ecosystem")
	c := manifestCase{adv: prompt.Advisory{ID: "GEN-1", Summary: "generated", Ecosystem: kind, FixedVersion: fixed}}
	var lines []string
	switch kind {
	case "npm":
		c.path = "package.json"
		c.adv.Package = name
		op := rapid.SampledFrom([]string{"", "^", "~", ">="}).Draw(t, "op")
		lines = append(lines, "{", `  "dependencies": {`)
		for _, f := range fillers {
			lines = append(lines, fmt.Sprintf(`    "%s": "^1.0.0",`, other(name, "zz-"+f)))
		}
		c.pinAt = rapid.IntRange(2, len(lines)).Draw(t, "pinAt")
		pin := fmt.Sprintf(`    "%s": "%s%s",`, name, op, old)
		c.want = fmt.Sprintf(`    "%s": "%s%s",`, name, op, fixed)
		lines = insert(lines, c.pinAt, pin)
		lines = append(lines, `    "zz-last": "1.0.0"`, "  }", "}")
	case "Go":
		c.path = "go.mod"
		c.adv.Package = "example.com/" + name
		lines = append(lines, "module example.com/app", "", "go 1.22", "", "require (")
		for _, f := range fillers {
			lines = append(lines, fmt.Sprintf("\texample.org/zz/%s v1.0.0", f))
		}
		c.pinAt = rapid.IntRange(5, len(lines)).Draw(t, "pinAt")
		comment := rapid.SampledFrom([]string{"", " // indirect"}).Draw(t, "comment")
		lines = insert(lines, c.pinAt, "\texample.com/"+name+" v"+old+comment)
		c.want = "\texample.com/" + name + " v" + fixed + comment
		lines = append(lines, ")")
	default:
		c.path = "requirements.txt"
		c.adv.Package = strings.ToUpper(name[:1]) + strings.ReplaceAll(name[1:], "-", "_")
		for _, f := range fillers {
			lines = append(lines, other(name, "zz"+f)+"==1.0")
		}
		c.pinAt = rapid.IntRange(0, len(lines)).Draw(t, "pinAt")
		tail := rapid.SampledFrom([]string{"", "  # pinned", ` ; python_version >= "3.8"`}).Draw(t, "tail")
		lines = insert(lines, c.pinAt, name+"=="+old+tail)
		c.want = name + "==" + fixed + tail
	}
	c.file = strings.Join(lines, eol) + eol
	return c
})

// other returns filler, changed if need be so that it never names the
// package under test: a manifest with two pins of it is another case.
func other(name, filler string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	for norm(filler) == norm(name) {
		filler += "0"
	}
	return filler
}

func insert(lines []string, at int, s string) []string {
	return append(lines[:at], append([]string{s}, lines[at:]...)...)
}

// TestBumpProperty: for every generated manifest the answer's diff applies
// and changes exactly the pin line, and NonApplying's diff never applies.
func TestBumpProperty(t *testing.T) {
	s := New(Config{})
	rapid.Check(t, func(t *rapid.T) {
		c := genManifest.Draw(t, "manifest")
		files := map[string]string{c.path: c.file}
		p := buildPrompt(t, c.adv, files)
		rep := s.answer(p.User)
		require.Equal(t, http.StatusOK, rep.status)
		diff, err := prompt.ParseAnswer(rep.text)
		require.NoError(t, err, rep.text)
		got, err := applyDiff(t, diff, files)
		require.NoError(t, err, "diff does not apply:\n%s\nto:\n%s", diff, c.file)
		eol := "\n"
		if strings.HasSuffix(c.file, "\r\n") {
			eol = "\r\n"
		}
		before := strings.Split(c.file, eol)
		after := strings.Split(got[c.path], eol)
		require.Len(t, after, len(before))
		for i := range before {
			if i == c.pinAt {
				require.Equal(t, c.want, after[i])
			} else {
				require.Equal(t, before[i], after[i], "line %d", i)
			}
		}

		bad := New(Config{Mode: NonApplying}).answer(p.User)
		badDiff, err := prompt.ParseAnswer(bad.text)
		require.NoError(t, err)
		_, err = applyDiff(t, badDiff, files)
		require.Error(t, err, "NonApplying diff applied:\n%s", badDiff)
	})
}

// FuzzServe: arbitrary bodies on every route never panic and always get a
// JSON or event-stream answer.
func FuzzServe(f *testing.F) {
	f.Add("/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	f.Add("/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`)
	f.Add("/v1/embeddings", `{"model":"m","input":["a","b"],"dimensions":3}`)
	f.Add("/v1/messages", `{"model":"m","max_tokens":-1,"system":[1],"messages":[{"role":"user","content":null}]}`)
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?# \t\r\n") {
			return
		}
		s := New(Config{})
		req, err := http.NewRequest(http.MethodPost, "http://fake.invalid"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		res, err := s.Transport().RoundTrip(req)
		require.NoError(t, err)
		defer res.Body.Close()
		ct := res.Header.Get("Content-Type")
		require.True(t, ct == "application/json" || strings.HasPrefix(ct, "text/event-stream"), ct)
	})
}
