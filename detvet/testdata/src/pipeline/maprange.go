package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
)

// ---- map order reaching output: true positives ----

func appendUnsorted(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k) // want `append to out inside a range over a map`
	}
	return out
}

func appendDerived(m map[string]int) []string {
	var out []string
	for k, v := range m {
		row := fmt.Sprintf("%s=%d", k, v)
		out = append(out, row) // want `append to out inside a range over a map`
	}
	return out
}

func writeBuilder(m map[string]int) string {
	var b strings.Builder
	for k, v := range m {
		fmt.Fprintf(&b, "%s=%d\n", k, v) // want `Fprintf writes to &b inside a range over a map`
	}
	return b.String()
}

func writeBuffer(m map[string]string) []byte {
	var buf bytes.Buffer
	for _, v := range m {
		buf.WriteString(v) // want `WriteString writes to buf`
	}
	return buf.Bytes()
}

func writeWriter(w io.Writer, m map[string]int) {
	for k := range m {
		io.WriteString(w, k) // want `WriteString writes to w`
	}
}

func printEntries(m map[string]int) {
	for k, v := range m {
		fmt.Println(k, v) // want `Println writes to output`
	}
}

func encodeEntries(enc *json.Encoder, m map[string]int) error {
	for _, v := range m {
		if err := enc.Encode(v); err != nil { // want `Encode writes to enc`
			return err // want `return inside a range over a map`
		}
	}
	return nil
}

func hashEntries(m map[string]string) []byte {
	h := fnv.New64a()
	for k, v := range m {
		h.Write([]byte(k + v)) // want `Write writes to h`
	}
	return h.Sum(nil)
}

type tape struct{ kinds []string }

func (t *tape) Emit(kind string) { t.kinds = append(t.kinds, kind) }

func emitEntries(t *tape, m map[string]bool) {
	for k := range m {
		t.Emit(k) // want `Emit writes to t`
	}
}

func returnFirst(m map[string]int) string {
	for k := range m {
		return k // want `return inside a range over a map`
	}
	return ""
}

func returnErr(m map[string]int, check func(string) error) error {
	for k := range m {
		if err := check(k); err != nil {
			return err // want `return inside a range over a map`
		}
	}
	return nil
}

func sendEntries(m map[string]int, ch chan<- string) {
	for k := range m {
		ch <- k // want `send on ch inside a range over a map`
	}
}

func concat(m map[string]bool) string {
	s := ""
	for k := range m {
		s += k + "," // want `s is built by concatenation`
	}
	return s
}

func floatSum(m map[string]float64) float64 {
	var total float64
	for _, v := range m {
		total += v // want `floating-point accumulation into total`
	}
	return total
}

func lastWins(m map[string]int) (last string) {
	for k := range m {
		last = k // want `assignment to last .* keeps the last entry`
	}
	return last
}

func pickFirst(m map[string]int) (first int) {
	for _, v := range m {
		if v > 0 {
			first = v // want `keeps the first entry`
			break
		}
	}
	return first
}

func yieldAll(m map[string]int) func(func(string, int) bool) {
	return func(yield func(string, int) bool) {
		for k, v := range m {
			if !yield(k, v) { // want `call of yield inside a range over a map`
				return
			}
		}
	}
}

func storeByCounter(m map[string]int) []string {
	keys := make([]string, len(m))
	i := 0
	for k := range m {
		keys[i] = k // want `store into keys inside a range over a map`
		i++
	}
	return keys
}

func rangeKeysIter(m map[string]int) []string {
	var out []string
	for k := range maps.Keys(m) {
		out = append(out, k) // want `append to out inside a range over a map`
	}
	return out
}

func collectUnsorted(m map[string]int) []string {
	return slices.Collect(maps.Keys(m)) // want `slices\.Collect over a map iterator`
}

func groupUnsorted(m map[string]string) map[string][]string {
	groups := map[string][]string{}
	for k, v := range m {
		groups[v] = append(groups[v], k) // want `append to groups\[v\] inside a range over a map`
	}
	return groups
}

// ---- map order not reaching output: true negatives ----

func sortedKeys(w io.Writer, m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k) // tn: sorted below
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s=%d\n", k, m[k]) // tn: ranging over a sorted slice
	}
}

func slicesSortedKeys(m map[string]int) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k) // tn: sorted below
	}
	slices.Sort(keys)
	return keys
}

func sortedIter(w io.Writer, m map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintln(w, k) // tn
	}
}

func collectThenSort(m map[string]int) []string {
	keys := slices.Collect(maps.Keys(m)) // tn: sorted below
	slices.Sort(keys)
	return keys
}

type entry struct {
	k string
	v int
}

func sortSliceAfter(m map[string]int) []entry {
	var es []entry
	for k, v := range m {
		es = append(es, entry{k, v}) // tn: sorted below
	}
	sort.Slice(es, func(i, j int) bool { return es[i].k < es[j].k })
	return es
}

func byCounterSorted(m map[string]int) []string {
	keys := make([]string, len(m))
	i := 0
	for k := range m {
		keys[i] = k // tn: sorted below
		i++
	}
	sort.Strings(keys)
	return keys
}

func sortEntries(es []string) { sort.Strings(es) }

func customSortHelper(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k) // tn: sorted by a helper below
	}
	sortEntries(out)
	return out
}

func sumInts(m map[string]int) (total, n int) {
	for _, v := range m {
		total += v // tn: integer addition commutes
		n++        // tn
	}
	return total, n
}

func copyMap(m map[string]int) map[string]int {
	dst := make(map[string]int, len(m))
	for k, v := range m {
		dst[k] = v // tn: copying into another map
	}
	return dst
}

func deleteNegative(m map[string]int) {
	for k, v := range m {
		if v < 0 {
			delete(m, k) // tn
		}
	}
}

func maxValue(m map[string]int) (best int) {
	for _, v := range m {
		if v > best {
			best = v // tn: the maximum does not depend on order
		}
	}
	return best
}

func contains(m map[string]int, want int) bool {
	for _, v := range m {
		if v == want {
			return true // tn: the answer does not depend on which entry matched
		}
	}
	return false
}

func lookup(m map[string]int, name string) (found int) {
	for k, v := range m {
		if k == name {
			found = v // tn: keys are unique
		}
	}
	return found
}

func perEntryBuilder(m map[string][]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, parts := range m {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p) // tn: the builder is local to the iteration
		}
		fmt.Fprintf(&b, " (%d parts)", len(parts)) // tn: the builder is local to the iteration
		out[k] = b.String()
	}
	return out
}

func constantWrites(w io.Writer, m map[string]int, done chan<- struct{}) {
	for range m {
		fmt.Fprintln(w, "tick") // tn: the same bytes whatever the order
		done <- struct{}{}      // tn
	}
}

func placeByValue(m map[string]int, slots []string) {
	for k, v := range m {
		slots[v] = k // tn: the entry decides its own slot
	}
}

func transformValues(m map[string]int, f func(int) int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = f(v) // tn: f is a transformer, not a callback
	}
	return out
}

func rangeSlice(w io.Writer, xs []string) {
	for _, x := range xs {
		fmt.Fprintln(w, x) // tn: slices have an order
	}
}

func mergeValues(dst, src map[string][]string) {
	for k, vs := range src {
		dst[k] = append(dst[k], vs...) // tn: each key is appended to once
	}
}

func carveArena(m map[string][]string) map[string][]string {
	n := 0
	for _, vv := range m {
		n += len(vv)
	}
	arena := make([]string, n)
	out := make(map[string][]string, len(m))
	for k, vv := range m {
		c := copy(arena, vv)
		out[k] = arena[:c:c]
		arena = arena[c:] // tn: consuming a buffer
	}
	return out
}

func unusedNames(m map[string]int, keep func(int) bool) (n int) {
	for _, v := range m {
		if keep(v) { // tn: a predicate, not a callback
			n++
		}
	}
	return n
}

func visitAll(m map[string]int, visit func(string, int)) {
	for k, v := range m {
		visit(k, v) // want `call of visit inside a range over a map`
	}
}
