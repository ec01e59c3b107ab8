package pipeline

import (
	"context"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
)

func twoReceives(a, b <-chan int) int {
	select { // want `select with 2 communication cases`
	case v := <-a:
		return v
	case v := <-b:
		return v
	}
}

func sendOrCancel(ctx context.Context, out chan<- int, v int) error {
	select { // want `select with 2 communication cases`
	case <-ctx.Done():
		return ctx.Err()
	case out <- v:
		return nil
	}
}

func threeWithDefault(a, b, c <-chan int) {
	select { // want `select with 3 communication cases`
	case <-a:
	case <-b:
	case <-c:
	default:
	}
}

func tryReceive(a <-chan int) (int, bool) {
	select { // tn: one case and a default
	case v := <-a:
		return v, true
	default:
		return 0, false
	}
}

func oneCase(a <-chan int) int {
	select { // tn: a single case
	case v := <-a:
		return v
	}
}

func goAppend(xs []int) []int {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		out []int
	)
	for _, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			out = append(out, x*x) // want `goroutine appends to shared slice out`
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func waitGroupGo(xs []string) []string {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		out []string
	)
	for _, x := range xs {
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			out = append(out, x+"!") // want `goroutine appends to shared slice out`
		})
	}
	wg.Wait()
	return out
}

type results struct {
	mu    sync.Mutex
	items []string
}

func errgroupAppend(r *results, xs []string) error {
	var g errgroup.Group
	for _, x := range xs {
		g.Go(func() error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.items = append(r.items, x) // want `goroutine appends to shared slice r\.items`
			return nil
		})
	}
	return g.Wait()
}

func goByIndex(xs []int) []int {
	out := make([]int, len(xs))
	var wg sync.WaitGroup
	for i, x := range xs {
		wg.Go(func() {
			out[i] = x * x // tn: each goroutine owns its slot
		})
	}
	wg.Wait()
	return out
}

func goAppendThenSort(xs []int) []int {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		out []int
	)
	for _, x := range xs {
		wg.Go(func() {
			mu.Lock()
			out = append(out, x*x) // tn: sorted after Wait
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Ints(out)
	return out
}

func goLocalAppend(xs []int, done chan<- []int) {
	go func() {
		var local []int
		for _, x := range xs {
			local = append(local, x) // tn: the slice belongs to the goroutine
		}
		done <- local
	}()
}
