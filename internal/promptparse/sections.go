package promptparse

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	pf "github.com/codegenie/codegenie/internal/promptformat"
	"github.com/codegenie/codegenie/prompt"
)

// prompt reads the whole User text, section by section (see the prompt
// package doc, "User text").
func (p *parser) prompt() (prompt.Input, error) {
	var in prompt.Input
	var err error
	if in.Advisory, err = p.advisory(); err != nil {
		return in, err
	}
	if err := p.expect("", pf.HRecipe); err != nil {
		return in, err
	}
	if in.Recipe, err = p.recipe(); err != nil {
		return in, err
	}
	if in.Files, err = p.files(); err != nil {
		return in, err
	}
	if l, _ := p.peek(); strings.HasPrefix(l, pf.HExamples+" ") {
		if in.Examples, err = p.examples(); err != nil {
			return in, err
		}
	}
	if l, _ := p.peek(); strings.HasPrefix(l, pf.HAttempts+" ") {
		if in.Attempts, err = p.attempts(); err != nil {
			return in, err
		}
	}
	if err := p.expect(pf.HAnswer, pf.AnswerLine); err != nil {
		return in, err
	}
	if !p.eof() {
		return in, errors.New("text after the answer instructions")
	}
	return in, nil
}

// advisory reads the task lines and the advisory section.
func (p *parser) advisory() (prompt.Advisory, error) {
	var a prompt.Advisory
	if err := p.expect(pf.HTask, pf.TaskLine, "", pf.HAdvisory); err != nil {
		return a, err
	}
	p.at.id = p.line
	if err := p.fields(
		dest{pf.FieldID, &a.ID}, dest{pf.FieldEcosystem, &a.Ecosystem}, dest{pf.FieldPackage, &a.Package},
		dest{pf.FieldVulnerableRange, &a.VulnerableRange}, dest{pf.FieldFixedVersion, &a.FixedVersion},
	); err != nil {
		return a, err
	}
	if err := p.expect("", pf.HSummary); err != nil {
		return a, err
	}
	p.at.summary = p.line
	var err error
	if a.Summary, err = p.block(pf.LangText); err != nil {
		return a, err
	}
	if err := p.expect("", pf.HDetails); err != nil {
		return a, err
	}
	a.Details, err = p.block(pf.LangText)
	return a, err
}

// recipe reads the recipe section after its heading, up to and including
// the empty line that ends it.
func (p *parser) recipe() (prompt.RecipeSelection, error) {
	var r prompt.RecipeSelection
	var err error
	if r.Recipe, err = p.field(pf.FieldRecipe); err != nil {
		return r, err
	}
	for {
		l, ok := p.peek()
		if !ok {
			return r, errors.New("unexpected end of text in recipe")
		}
		if l == "" {
			return r, p.expect("")
		}
		rest, err := p.prefixed(pf.ParamPrefix)
		if err != nil {
			return r, err
		}
		kq, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return r, fmt.Errorf("param key: %w", err)
		}
		k, _ := strconv.Unquote(kq)
		vq, ok := strings.CutPrefix(rest[len(kq):], ": ")
		if !ok {
			return r, fmt.Errorf("param %q: want \": \" after the key", k)
		}
		v, err := unquote(vq)
		if err != nil {
			return r, err
		}
		if r.Params == nil {
			r.Params = map[string]string{}
		}
		r.Params[k] = v
	}
}

// files reads the repository files section. Paths must increase, so that
// a repeated path is reported where it is rather than by the rebuild.
func (p *parser) files() ([]prompt.File, error) {
	p.at.files = p.line
	n, err := p.counted(pf.HFiles)
	if err != nil {
		return nil, err
	}
	if err := p.expect(""); err != nil {
		return nil, err
	}
	var out []prompt.File
	for i := range n {
		p.at.file = append(p.at.file, p.line)
		rest, err := p.prefixed(pf.HFile)
		if err != nil {
			return nil, err
		}
		var f prompt.File
		if f.Path, err = unquote(rest); err != nil {
			return nil, err
		}
		if i > 0 && f.Path <= out[i-1].Path {
			p.line--
			return nil, fmt.Errorf("file %q out of order or repeated", f.Path)
		}
		content, err := p.block(pf.LangText)
		if err != nil {
			return nil, err
		}
		if content != "" {
			f.Content = []byte(content)
		}
		if err := p.expect(""); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// examples reads the solved examples section.
func (p *parser) examples() ([]prompt.Example, error) {
	n, err := p.counted(pf.HExamples)
	if err != nil {
		return nil, err
	}
	if err := p.expect(pf.ExamplesLine, ""); err != nil {
		return nil, err
	}
	var out []prompt.Example
	for i := range n {
		var e prompt.Example
		if err := p.expect(pf.HExample + strconv.Itoa(i+1)); err != nil {
			return nil, err
		}
		if err := p.fields(dest{pf.FieldID, &e.ID}, dest{pf.FieldEcosystem, &e.Ecosystem}, dest{pf.FieldPackage, &e.Package}); err != nil {
			return nil, err
		}
		p.at.score = append(p.at.score, p.line)
		score, err := p.prefixed(pf.ScorePrefix)
		if err != nil {
			return nil, err
		}
		if e.Score, err = strconv.ParseFloat(score, 64); err != nil {
			p.line--
			return nil, fmt.Errorf("want a score with %d decimals, got %q", prompt.ScoreDecimals, clip(score))
		}
		if err := p.fields(dest{pf.FieldBand, &e.Band}); err != nil {
			return nil, err
		}
		if err := p.expect(pf.HExampleAdvisory); err != nil {
			return nil, err
		}
		if e.Advisory, err = p.block(pf.LangText); err != nil {
			return nil, err
		}
		if err := p.expect(pf.HExampleFix); err != nil {
			return nil, err
		}
		if e.Fix, err = p.block(pf.LangDiff); err != nil {
			return nil, err
		}
		if err := p.expect(""); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// attempts reads the previous attempts section.
func (p *parser) attempts() ([]prompt.AttemptSummary, error) {
	n, err := p.counted(pf.HAttempts)
	if err != nil {
		return nil, err
	}
	if err := p.expect(pf.AttemptsLine, ""); err != nil {
		return nil, err
	}
	var out []prompt.AttemptSummary
	for range n {
		var x prompt.AttemptSummary
		p.at.attempt = append(p.at.attempt, p.line)
		num, err := p.prefixed(pf.HAttempt)
		if err != nil {
			return nil, err
		}
		if x.Attempt, err = count(num); err != nil {
			p.line--
			return nil, err
		}
		if err := p.fields(dest{pf.FieldRecipe, &x.Recipe}, dest{pf.FieldOutcome, &x.Outcome}); err != nil {
			return nil, err
		}
		if err := p.expect(pf.HAttemptError); err != nil {
			return nil, err
		}
		if x.Error, err = p.block(pf.LangText); err != nil {
			return nil, err
		}
		if err := p.expect(""); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}
