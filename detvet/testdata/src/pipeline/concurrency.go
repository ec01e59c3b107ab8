package pipeline

import (
	"context"
	"log/slog"
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

func threeWithDefault(a, b, c <-chan int) (n int) {
	select { // want `select with 3 communication cases`
	case <-a:
		n = 1
	case <-b:
	case <-c:
	default:
	}
	return n
}

func drainAny(a, b <-chan int) {
	select { // tn: whichever case runs, nothing an output sees changes
	case <-a:
	case <-b:
		slog.Debug("b first")
	}
}

// resultOrError waits for one goroutine that sends either its result or
// its error, never both: the cases cannot be ready together.
func resultOrError(f func() (int, error)) (int, error) {
	res := make(chan int)
	errc := make(chan error, 1)
	go func() {
		v, err := f()
		if err != nil {
			errc <- err
			return
		}
		res <- v
	}()
	select { // tn: one producer, one send on any path
	case v := <-res:
		return v, nil
	case err := <-errc:
		return 0, err
	}
}

// resultAndDone sends twice on one path: both can be ready.
func resultAndDone(f func() int) int {
	res := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		res <- f()
		close(done)
	}()
	select { // want `select with 2 communication cases`
	case v := <-res:
		return v
	case <-done:
		return -1
	}
}

func backgroundNeverDone(a <-chan int) int {
	select { // tn: context.Background().Done() is nil and never ready
	case <-context.Background().Done():
		return 0
	case v := <-a:
		return v
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

func goOnceAppends(xs []string) []string {
	var out []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, x := range xs {
			out = append(out, x) // tn: one goroutine, started once, appends in its own order
		}
	}()
	<-done
	return out
}

func goTwiceAppends(xs []string) []string {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		out []string
	)
	wg.Go(func() {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, xs[0]) // want `goroutine appends to shared slice out`
	})
	wg.Go(func() {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, xs[1]) // want `goroutine appends to shared slice out`
	})
	wg.Wait()
	return out
}

func goOnceWithCaller(xs []string) []string {
	var (
		mu  sync.Mutex
		out []string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu.Lock()
		defer mu.Unlock()
		out = append(out, xs...) // want `goroutine appends to shared slice out`
	}()
	mu.Lock()
	out = append(out, "caller")
	mu.Unlock()
	<-done
	return out
}
