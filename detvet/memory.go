package detvet

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// This file finds the memory a value refers to, so that what is written
// into it can be followed.

// mark records that something nondeterministic was written into the
// memory addr refers to: local memory is followed, the caller's memory
// and package-level variables are outputs.
func (w *walker) mark(addr ssa.Value) {
	for _, r := range roots(addr) {
		switch r := r.(type) {
		case *ssa.FreeVar:
			// A captured variable: follow it in the function that made
			// the closure, where it is local.
			bound := w.f.bindings(r)
			if len(bound) == 0 {
				w.output = true
			}
			for _, b := range bound {
				w.mark(b)
			}
		case *ssa.Parameter:
			w.output = true
		case *ssa.Global:
			if !isStderr(r) {
				w.output = true
			}
		case *ssa.Const, *ssa.Function, *ssa.Builtin:
		case *ssa.Call:
			if opensFile(r) {
				w.output = true // written into a file
			}
			w.add(r)
		default:
			w.add(r)
		}
	}
}

// roots returns the values whose memory v refers to: the allocation,
// parameter, free variable or global it is derived from, and for a call
// result also the memory of its pointer-like arguments (json.NewEncoder(w)
// writes to w).
func roots(v ssa.Value) []ssa.Value {
	var out []ssa.Value
	seen := map[ssa.Value]bool{}
	var rec func(v ssa.Value)
	rec = func(v ssa.Value) {
		if v == nil || seen[v] || len(seen) > 200 {
			return
		}
		seen[v] = true
		switch x := v.(type) {
		case *ssa.FieldAddr:
			rec(x.X)
		case *ssa.IndexAddr:
			rec(x.X)
		case *ssa.Field:
			rec(x.X)
		case *ssa.Index:
			rec(x.X)
		case *ssa.Slice:
			rec(x.X)
		case *ssa.Lookup:
			rec(x.X)
		case *ssa.UnOp:
			rec(x.X)
			if x.Op == token.MUL {
				// A value loaded from a variable shares memory with what
				// was stored in it (a slice's array, a map).
				rec(loadedFrom(x.X))
			}
		case *ssa.ChangeType:
			rec(x.X)
		case *ssa.Convert:
			rec(x.X)
		case *ssa.ChangeInterface:
			rec(x.X)
		case *ssa.MakeInterface:
			rec(x.X)
		case *ssa.TypeAssert:
			rec(x.X)
		case *ssa.SliceToArrayPointer:
			rec(x.X)
		case *ssa.Extract:
			rec(x.Tuple)
		case *ssa.Phi:
			for _, e := range x.Edges {
				rec(e)
			}
		case *ssa.Call:
			out = append(out, x)
			if b, ok := x.Call.Value.(*ssa.Builtin); ok {
				if b.Name() == "append" && len(x.Call.Args) > 0 {
					rec(x.Call.Args[0])
				}
				return
			}
			if !wraps(x.Type()) {
				return // a fresh value (slices.Clone, strings.Fields)
			}
			for i, a := range x.Call.Args {
				if i == 0 && x.Call.IsInvoke() || pointerLike(a.Type()) {
					rec(a)
				}
			}
			if x.Call.IsInvoke() {
				rec(x.Call.Value)
			}
		default:
			out = append(out, v)
		}
	}
	rec(v)
	return out
}

// wraps reports whether a call returning t may return something that
// refers to its arguments: a pointer or an interface (json.NewEncoder(w),
// bufio.NewWriter(w)), first of a tuple.
func wraps(t types.Type) bool {
	if tu, ok := t.(*types.Tuple); ok {
		if tu.Len() == 0 {
			return false
		}
		t = tu.At(0).Type()
	}
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return true
	}
	return false
}

// loadedFrom returns, for a local variable or a captured one, a phi-like
// union of the values stored into it, or nil.
func loadedFrom(addr ssa.Value) ssa.Value {
	var vars []ssa.Value
	switch a := addr.(type) {
	case *ssa.Alloc:
		vars = []ssa.Value{a}
	case *ssa.FreeVar:
		vars = bindingsOf(a)
	}
	var stored []ssa.Value
	for _, v := range vars {
		if !pointerLike(deref(v.Type())) || v.Referrers() == nil {
			continue
		}
		for _, r := range *v.Referrers() {
			if st, ok := r.(*ssa.Store); ok && st.Addr == v {
				stored = append(stored, st.Val)
			}
		}
	}
	if len(stored) == 0 {
		return nil
	}
	return &ssa.Phi{Edges: stored}
}

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func pointerLike(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Interface:
		return true
	}
	return false
}

func isStderr(g *ssa.Global) bool {
	return g.Pkg != nil && g.Pkg.Pkg.Path() == "os" && g.Name() == "Stderr"
}

// bindings returns the values bound to free variable fv by the closures
// made of its function.
func (f *flow) bindings(fv *ssa.FreeVar) []ssa.Value { return bindingsOf(fv) }

func bindingsOf(fv *ssa.FreeVar) []ssa.Value {
	fn := fv.Parent()
	parent := fn.Parent()
	if parent == nil {
		return nil
	}
	idx := slices.Index(fn.FreeVars, fv)
	var out []ssa.Value
	for _, b := range parent.Blocks {
		for _, instr := range b.Instrs {
			if mc, ok := instr.(*ssa.MakeClosure); ok && mc.Fn == fn && idx < len(mc.Bindings) {
				out = append(out, mc.Bindings[idx])
			}
		}
	}
	return out
}
