package secrets

import (
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// runeSet is a set of runes: the runes that can precede an anchor.
type runeSet struct {
	ascii [utf8.RuneSelf]bool
	other [][2]rune // sorted, disjoint ranges of runes above ASCII
	all   bool
}

func (s *runeSet) has(r rune) bool {
	if s.all {
		return true
	}
	if r < utf8.RuneSelf {
		return s.ascii[r]
	}
	i, _ := slices.BinarySearchFunc(s.other, r, func(x [2]rune, r rune) int {
		if x[1] < r {
			return -1
		}
		if x[0] > r {
			return 1
		}
		return 0
	})
	return i < len(s.other) && s.other[i][0] <= r && r <= s.other[i][1]
}

func (s *runeSet) addRange(lo, hi rune) {
	for ; lo <= hi && lo < utf8.RuneSelf; lo++ {
		s.ascii[lo] = true
	}
	if lo <= hi {
		s.other = append(s.other, [2]rune{lo, hi})
		slices.SortFunc(s.other, func(a, b [2]rune) int { return int(a[0] - b[0]) })
		merged := s.other[:1]
		for _, x := range s.other[1:] {
			if last := &merged[len(merged)-1]; x[0] <= last[1]+1 {
				last[1] = max(last[1], x[1])
			} else {
				merged = append(merged, x)
			}
		}
		s.other = merged
	}
}

func (s *runeSet) union(t runeSet) {
	s.all = s.all || t.all
	for r, ok := range t.ascii {
		s.ascii[r] = s.ascii[r] || ok
	}
	for _, x := range t.other {
		s.addRange(x[0], x[1])
	}
}

// add adds every rune re can consume.
func (s *runeSet) add(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpAnyChar:
		s.all = true
	case syntax.OpAnyCharNotNL:
		s.addRange(0, '\n'-1)
		s.addRange('\n'+1, unicode.MaxRune)
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			s.addRange(re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			s.addRange(r, r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					s.addRange(f, f)
				}
			}
		}
	default:
		for _, sub := range re.Sub {
			s.add(sub)
		}
	}
}
