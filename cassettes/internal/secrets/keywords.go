package secrets

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// keywords finds every occurrence of the rules' keywords in a text in one
// pass: an Aho-Corasick automaton over the text's runes, each lowered as
// strings.ToLower lowers it, so it finds exactly what strings.Index finds
// in strings.ToLower(text), with offsets into text itself.
type keywords struct {
	words []string // by id, lower-case ASCII
	ids   map[string]int
	sym   [utf8.RuneSelf]uint8 // the symbol of each lowered ASCII rune; 0 for runes no keyword holds
	nsym  int
	next  []uint16   // the automaton: next[state*nsym+symbol]
	out   [][]uint16 // the keywords that end at each state
}

// maxKeyword bounds keyword length, in runes.
const maxKeyword = 64

func newKeywords(words []string) (*keywords, error) {
	k := &keywords{ids: map[string]int{}, nsym: 1}
	for _, w := range words {
		if _, dup := k.ids[w]; dup {
			continue
		}
		if w == "" || len(w) > maxKeyword {
			return nil, fmt.Errorf("keyword %q: empty or longer than %d bytes", w, maxKeyword)
		}
		for i := 0; i < len(w); i++ {
			c := w[i]
			if c >= utf8.RuneSelf || unicode.ToLower(rune(c)) != rune(c) {
				return nil, fmt.Errorf("keyword %q: not lower-case ASCII", w)
			}
			if k.sym[c] == 0 {
				k.sym[c] = uint8(k.nsym)
				k.nsym++
			}
		}
		k.ids[w] = len(k.words)
		k.words = append(k.words, w)
	}
	// The trie, then failure links breadth first, folded into the table.
	trie := [][]uint16{make([]uint16, k.nsym)}
	var ends [][]uint16
	ends = append(ends, nil)
	for id, w := range k.words {
		s := 0
		for i := 0; i < len(w); i++ {
			c := k.sym[w[i]]
			if trie[s][c] == 0 {
				trie = append(trie, make([]uint16, k.nsym))
				ends = append(ends, nil)
				trie[s][c] = uint16(len(trie) - 1)
			}
			s = int(trie[s][c])
		}
		ends[s] = append(ends[s], uint16(id))
	}
	if len(trie) >= 1<<16 {
		return nil, fmt.Errorf("%d keyword states, more than the automaton holds", len(trie))
	}
	k.next = make([]uint16, len(trie)*k.nsym)
	k.out = make([][]uint16, len(trie))
	fail := make([]uint16, len(trie))
	queue := []uint16{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		k.out[s] = append(ends[s], k.out[fail[s]]...)
		for c := range k.nsym {
			t := trie[s][c]
			switch {
			case t != 0 && s != 0:
				fail[t] = k.next[int(fail[s])*k.nsym+c]
				fallthrough
			case t != 0:
				k.next[int(s)*k.nsym+c] = t
				queue = append(queue, t)
			case s != 0:
				k.next[int(s)*k.nsym+c] = k.next[int(fail[s])*k.nsym+c]
			}
		}
	}
	return k, nil
}

// occurrences holds where each keyword occurs in a text: the start and end
// offsets of keyword id are starts[at[id]:at[id+1]] and likewise ends, in
// order.
type occurrences struct {
	at           []int32
	starts, ends []int32
}

// has reports whether keyword id occurs.
func (o *occurrences) has(id int) bool { return o.at[id+1] > o.at[id] }

// find returns the occurrences of every keyword in text.
func (k *keywords) find(text string) *occurrences {
	type hit struct {
		id         uint16
		start, end int32
	}
	var hits []hit
	var starts [maxKeyword]int32 // the start of each of the last runes, by rune index mod maxKeyword
	s, n := 0, 0
	for i := 0; i < len(text); n++ {
		c, size := rune(text[i]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRuneInString(text[i:])
			c = unicode.ToLower(c)
		} else if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		starts[n%maxKeyword] = int32(i)
		i += size
		sym := 0
		if c < utf8.RuneSelf {
			sym = int(k.sym[c])
		}
		s = int(k.next[s*k.nsym+sym])
		for _, id := range k.out[s] {
			hits = append(hits, hit{id, starts[(n+1-len(k.words[id]))%maxKeyword], int32(i)})
		}
	}
	o := &occurrences{at: make([]int32, len(k.words)+1), starts: make([]int32, len(hits)), ends: make([]int32, len(hits))}
	for _, h := range hits {
		o.at[h.id+1]++
	}
	for id := range k.words {
		o.at[id+1] += o.at[id]
	}
	fill := append([]int32(nil), o.at[:len(k.words)]...)
	for _, h := range hits {
		o.starts[fill[h.id]], o.ends[fill[h.id]] = h.start, h.end
		fill[h.id]++
	}
	return o
}
