// Package errgroup is a stub of golang.org/x/sync/errgroup.
package errgroup

type Group struct{}

func (g *Group) Go(f func() error) { _ = f() }
func (g *Group) Wait() error       { return nil }
