package prompt_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kr/pretty"
	"pgregory.net/rapid"

	"github.com/codegenie/codegenie/internal/prompttest"
	"github.com/codegenie/codegenie/prompt"
)

// markdownBlocks returns the bodies of the fenced blocks a CommonMark reader
// (the model) sees in text: a line starting with three or more backticks
// opens a block, a line of at least as many backticks and nothing else
// closes it.
func markdownBlocks(text string) []string {
	var out []string
	var body strings.Builder
	open := 0
	for _, l := range strings.SplitAfter(text, "\n") {
		bare := strings.TrimSuffix(l, "\n")
		ticks := len(bare) - len(strings.TrimLeft(bare, "`"))
		switch {
		case open == 0 && ticks >= 3:
			open = ticks
			body.Reset()
		case open > 0 && ticks >= open && ticks == len(bare):
			out = append(out, body.String())
			open = 0
		case open > 0:
			body.WriteString(l)
		}
	}
	return out
}

// shown is how content appears inside its block to a Markdown reader.
func shown(content []byte) string {
	if !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
		enc := base64.StdEncoding.EncodeToString(content)
		var b strings.Builder
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\n")
			enc = enc[76:]
		}
		return b.String() + enc + "\n"
	}
	if len(content) > 0 && content[len(content)-1] != '\n' {
		return string(content) + "\n"
	}
	return string(content)
}

// TestMarkdownReaderSeesSameBlocks checks the fences against a reader that
// knows nothing of the byte counts: content can never close its block early.
func TestMarkdownReaderSeesSameBlocks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := prompttest.Input().Draw(t, "input")
		p := prompttest.Build(t, in)
		c, err := prompt.Builder{}.Canonical(in)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{shown([]byte(c.Advisory.Summary)), shown([]byte(c.Advisory.Details))}
		for _, f := range c.Files {
			want = append(want, shown(f.Content))
		}
		for _, e := range c.Examples {
			want = append(want, shown([]byte(e.Advisory)), shown([]byte(e.Fix)))
		}
		for _, a := range c.Attempts {
			want = append(want, shown([]byte(a.Error)))
		}
		got := markdownBlocks(p.User)
		if diff := pretty.Diff(want, got); len(diff) > 0 {
			t.Fatalf("a Markdown reader sees different blocks:\n%s", strings.Join(diff, "\n"))
		}
	})
}
