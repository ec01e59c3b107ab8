package secrets

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// An anchor says where every match of a rule's expression holds one of
// the rule's keywords, as the keyword index finds them: the match starts
// at most before bytes (-1: any number) ahead of an element of the
// expression, every rune ahead of that element is in chars, and a keyword
// starts at most e bytes into the element's text. A rule with an anchor
// can only match where such a start lies before one of its keywords'
// occurrences, so its expression need run only there.
type anchor struct {
	before, e int
	chars     runeSet
}

// piece is one rune of a string an element can match, as the keyword
// index sees it: lowered, and the most bytes it can take in the text.
type piece struct {
	r rune
	w int
}

// Bounds on the strings anchorOf expands elements into.
const (
	maxStrings = 256
	maxPieces  = 48
	maxClass   = 64
)

// anchorOf works out an anchor of the expression re for the keywords.
func anchorOf(re *syntax.Regexp, words []string) (anchor, bool) {
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return anchorOf(re.Sub[0], words)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return anchorOf(re.Sub[0], words)
		}
	case syntax.OpAlternate:
		var a anchor
		for i, sub := range re.Sub {
			b, ok := anchorOf(sub, words)
			if !ok {
				return anchor{}, false
			}
			if i == 0 {
				a = b
				continue
			}
			if a.before < 0 || b.before < 0 {
				a.before = -1
			} else {
				a.before = max(a.before, b.before)
			}
			a.e = max(a.e, b.e)
			a.chars.union(b.chars)
		}
		return a, true
	case syntax.OpConcat:
		var a anchor
		for i, sub := range re.Sub {
			if e, ok := keywordStart(re.Sub[i:], words); ok {
				a.e = e
				return a, true
			}
			if b, ok := anchorOf(sub, words); ok {
				a.before = addLen(a.before, b.before)
				a.e = b.e
				a.chars.union(b.chars)
				return a, true
			}
			a.before = addLen(a.before, maxLenOf(sub))
			a.chars.add(sub)
		}
		return anchor{}, false
	}
	e, ok := keywordStart([]*syntax.Regexp{re}, words)
	return anchor{e: e}, ok
}

// addLen adds byte counts where -1 is unbounded.
func addLen(a, b int) int {
	if a < 0 || b < 0 || a+b > maxWindow {
		return -1
	}
	return a + b
}

func maxLenOf(re *syntax.Regexp) int {
	if n := syntaxMax(re); n <= maxWindow {
		return n
	}
	return -1
}

// keywordStart reports whether every match of the concatenation seq
// starts with a string holding a keyword, and the most bytes ahead of the
// first such keyword.
func keywordStart(seq []*syntax.Regexp, words []string) (int, bool) {
	strs := [][]piece{nil}
	for _, re := range seq {
		if !slices.ContainsFunc(strs, func(s []piece) bool { return keywordAt(s, words) < 0 }) {
			break
		}
		next, exact := expand(re)
		more, ok := product(strs, next)
		if !ok {
			break
		}
		if strs = more; !exact {
			break
		}
	}
	if len(strs) == 0 {
		return 0, false
	}
	e := 0
	for _, s := range strs {
		i := keywordAt(s, words)
		if i < 0 {
			return 0, false
		}
		w := 0
		for _, p := range s[:i] {
			w += p.w
		}
		e = max(e, w)
	}
	return e, true
}

// keywordAt returns the index in s of the first piece that starts a
// keyword, or -1.
func keywordAt(s []piece, words []string) int {
	for i := range s {
		for _, w := range words {
			if len(w) <= len(s)-i && matchAt(s[i:], w) {
				return i
			}
		}
	}
	return -1
}

func matchAt(s []piece, w string) bool {
	for j := 0; j < len(w); j++ {
		if s[j].r != rune(w[j]) {
			return false
		}
	}
	return true
}

// product concatenates every string of a with every string of b; ok is
// false when there would be more strings than maxStrings.
func product(a, b [][]piece) (out [][]piece, ok bool) {
	if len(a)*len(b) > maxStrings {
		return nil, false
	}
	for _, x := range a {
		for _, y := range b {
			s := append(slices.Clip(x), y...)
			out = append(out, s[:min(len(s), maxPieces)])
		}
	}
	return out, true
}

// expand returns strings every match of re starts with, and whether they
// are exactly the strings re matches. Nothing known is the empty string.
func expand(re *syntax.Regexp) ([][]piece, bool) {
	unknown := [][]piece{nil}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return unknown, true
	case syntax.OpLiteral:
		strs := unknown
		for _, r := range re.Rune {
			more, ok := product(strs, runeChoices(r, re.Flags&syntax.FoldCase != 0))
			if !ok {
				return strs, false
			}
			strs = more
		}
		return strs, true
	case syntax.OpCharClass:
		var strs [][]piece
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if len(strs)+int(re.Rune[i+1]-re.Rune[i]) >= maxClass {
				return unknown, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if !foldOnly[r] {
					strs = addPiece(strs, piece{r: unicode.ToLower(r), w: utf8.RuneLen(r)})
				}
			}
		}
		return strs, true
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpConcat:
		strs := unknown
		for _, sub := range re.Sub {
			next, exact := expand(sub)
			more, ok := product(strs, next)
			if !ok {
				return strs, false
			}
			if strs = more; !exact {
				return strs, false
			}
		}
		return strs, true
	case syntax.OpAlternate:
		var strs [][]piece
		exact := true
		for _, sub := range re.Sub {
			next, ex := expand(sub)
			if len(strs)+len(next) > maxStrings {
				return unknown, false
			}
			strs, exact = append(strs, next...), exact && ex
		}
		return strs, exact
	case syntax.OpQuest:
		next, exact := expand(re.Sub[0])
		return append(unknown, next...), exact
	case syntax.OpPlus:
		next, _ := expand(re.Sub[0])
		return next, false
	case syntax.OpRepeat:
		if re.Min == 0 {
			return unknown, false
		}
		next, exact := expand(re.Sub[0])
		strs := next
		for i := 1; i < re.Min && exact; i++ {
			more, ok := product(strs, next)
			if !ok {
				return strs, false
			}
			strs = more
		}
		return strs, exact && re.Min == re.Max
	}
	return unknown, false
}

// addPiece adds the one-piece string p to strs, merging it with one of
// the same rune.
func addPiece(strs [][]piece, p piece) [][]piece {
	if i := slices.IndexFunc(strs, func(s []piece) bool { return s[0].r == p.r }); i >= 0 {
		strs[i][0].w = max(strs[i][0].w, p.w)
		return strs
	}
	return append(strs, []piece{p})
}

// runeChoices returns the pieces a literal rune r can take in the text:
// r itself or, when fold is set, any rune of its case-folding orbit other
// than those the scan handles without anchors (see foldOnly).
func runeChoices(r rune, fold bool) [][]piece {
	orbit := []rune{r}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if !foldOnly[f] {
				orbit = append(orbit, f)
			}
		}
	}
	var out [][]piece
	for _, m := range orbit {
		out = addPiece(out, piece{r: unicode.ToLower(m), w: utf8.RuneLen(m)})
	}
	return out
}

// foldOnly are the runes a case-insensitive expression matches in place
// of an ASCII letter although strings.ToLower does not lower them to it
// (U+017F LATIN SMALL LETTER LONG S for s): a keyword spelled with one is
// invisible to the keyword index, so a text holding one is scanned
// without anchors.
var foldOnly = func() map[rune]bool {
	m := map[rune]bool{}
	for c := 'a'; c <= 'z'; c++ {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if l := unicode.ToLower(f); l >= utf8.RuneSelf {
				m[f] = true
			}
		}
	}
	return m
}()

// hasFoldOnly reports whether the valid UTF-8 text holds a rune of
// foldOnly. Every such rune is above ASCII, so only the bytes from
// utf8.RuneSelf up are decoded.
func hasFoldOnly(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] < utf8.RuneSelf {
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if foldOnly[r] {
			return true
		}
		i += size - 1
	}
	return false
}

// anchored is a rule's expression prepared to find, from a given offset of
// a text, its leftmost match as a search over the whole text would: it
// tries each start in turn over up to searchWidth+1 runes, with the rune
// before the offset as context for \b and the like. It holds one such
// search for each of searchWidths, so a short window of starts is
// searched over its own width: the expression's automaton then follows
// fewer starts, and stops sooner.
type anchored struct {
	anchor
	// atStart and after hold, for each of searchWidths, the expression
	// from offset 0 and from after one rune of context.
	atStart, after [len(searchWidths)]*regexp.Regexp
}

// searchWidth is how many runes past its offset one search tries starts,
// at most; searchWidths are the widths searches are prepared for,
// ascending.
const searchWidth = 64

var searchWidths = [...]int{4, 16, searchWidth}

func newAnchored(r *rule) *anchored {
	re, err := syntax.Parse(r.Regex, syntax.Perl)
	if err != nil {
		return nil
	}
	a, ok := anchorOf(re, r.Keywords)
	if !ok {
		return nil
	}
	an := &anchored{anchor: a}
	for i, w := range searchWidths {
		lazy := "(?s:.){0," + strconv.Itoa(w) + "}?(" + r.Regex + ")"
		an.atStart[i], an.after[i] = regexp.MustCompile(`\A`+lazy), regexp.MustCompile(`\A(?s:.)`+lazy)
	}
	return an
}

// windows returns, sorted and merged, the ranges of offsets where a match
// of the expression can start, given the occurrences of its keywords ids:
// from the start of the run of runes in chars ahead of each place the
// anchor element can start (at most before bytes ahead), to the keyword.
func (a *anchored) windows(text string, o *occurrences, ids []int) [][2]int {
	var starts []int
	for _, id := range ids {
		for j := o.at[id]; j < o.at[id+1]; j++ {
			starts = append(starts, int(o.starts[j]))
		}
	}
	slices.Sort(starts)
	var ws [][2]int
	prevQ, prevRun := -1, 0
	for _, ks := range starts {
		q := runeStart(text, max(0, ks-a.e))
		run := q // the start of the run of runes in chars that ends at q
		for run > 0 && run > prevQ {
			r, size := utf8.DecodeLastRuneInString(text[:run])
			if !a.chars.has(r) {
				break
			}
			run -= size
		}
		if run <= prevQ && prevQ >= 0 {
			run = min(run, prevRun) // the run reaches back past the previous one's end
		}
		prevQ, prevRun = q, run
		lo := run
		if a.before >= 0 {
			lo = max(lo, runeStart(text, max(0, q-a.before)))
		}
		ws = append(ws, [2]int{lo, ks})
	}
	slices.SortFunc(ws, func(x, y [2]int) int { return x[0] - y[0] })
	merged := ws[:0]
	for _, w := range ws {
		if n := len(merged); n > 0 && w[0] <= merged[n-1][1]+1 {
			merged[n-1][1] = max(merged[n-1][1], w[1])
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

// runeStart returns the start of the rune that holds offset i of the
// valid UTF-8 text.
func runeStart(text string, i int) int {
	for i > 0 && i < len(text) && !utf8.RuneStart(text[i]) {
		i--
	}
	return i
}

// matches returns, as the whole text's FindAllStringIndex would, the
// matches that start in windows: for each, the leftmost match from the
// window's start (or the previous match's end) on.
func (a *anchored) matches(text string, windows [][2]int) [][]int {
	var out [][]int
	pos := 0
	for _, w := range windows {
		for from := max(w[0], pos); from <= w[1] && from < len(text); {
			k := width(w[1] - from)
			s, e, ok := a.search(text, from, k)
			if !ok {
				from = runeStart(text, from+searchWidths[k]+1) // every start up to there was tried
				continue
			}
			out = append(out, []int{s, e})
			pos, from = e, e
		}
	}
	return out
}

// width returns the index of the narrowest of searchWidths that tries
// the starts n bytes (so at most n runes) past an offset, or of the
// widest.
func width(n int) int {
	for k, w := range searchWidths {
		if w >= n {
			return k
		}
	}
	return len(searchWidths) - 1
}

// search returns the leftmost match of the expression in text that starts
// within searchWidths[k]+1 runes of offset from, judged in the whole
// text.
func (a *anchored) search(text string, from, k int) (start, end int, ok bool) {
	var loc []int
	j := 0
	if from == 0 {
		loc = a.atStart[k].FindStringSubmatchIndex(text)
	} else {
		_, size := utf8.DecodeLastRuneInString(text[:from])
		j = from - size
		loc = a.after[k].FindStringSubmatchIndex(text[j:])
	}
	if loc == nil {
		return 0, 0, false
	}
	return j + loc[2], j + loc[3], true
}
