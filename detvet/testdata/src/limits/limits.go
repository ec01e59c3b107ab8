// Package limits pins detvet's known false negatives (see "Limits" in the
// package documentation). Every function here lets map order or scheduling
// reach output, and detvet reports none of them. If a change starts
// reporting one, move it to the pipeline corpus with an expectation.
package limits

import (
	"fmt"
	"io"
	"sync"
)

func write(w io.Writer, s string) { fmt.Fprintln(w, s) }

// miss: the order escapes through a call.
func throughCall(w io.Writer, m map[string]int) {
	for k := range m {
		write(w, k)
	}
}

// miss: control dependence.
func throughBranch(w io.Writer, m map[string]int) {
	for k := range m {
		if k == "a" {
			fmt.Fprintln(w, "A")
		} else {
			fmt.Fprintln(w, "B")
		}
	}
}

// miss: argmax with ties.
func argmax(m map[string]int) (name string) {
	best := -1
	for k, v := range m {
		if v > best {
			best, name = v, k
		}
	}
	return name
}

// miss: colliding keys in a map copy.
func collide(m map[string]int, f func(string) string) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[f(k)] = v
	}
	return out
}

// miss: a goroutine sends instead of appending.
func goSend(xs []int) []int {
	ch := make(chan int, len(xs))
	var wg sync.WaitGroup
	for _, x := range xs {
		wg.Go(func() { ch <- x })
	}
	wg.Wait()
	close(ch)
	var out []int
	for v := range ch {
		out = append(out, v)
	}
	return out
}
