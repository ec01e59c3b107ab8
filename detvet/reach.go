package detvet

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

// This file holds the value flow that decides whether a nondeterministic
// value can reach an output. It works on the SSA form of the package and
// is documented under "Outputs" in doc.go.

// flow is the SSA form of one package and the memoised answers about it.
type flow struct {
	pkg       *ssa.Package
	funcs     []*ssa.Function               // source functions, closures included
	exprs     map[ast.Expr]ssa.Value        // values of expressions
	addrs     map[ast.Expr]ssa.Value        // addresses of addressable expressions
	calls     map[*ssa.Function][]*ssa.Call // static call sites in the package
	addrTaken map[*ssa.Function]bool
	retOut    map[*ssa.Function]int8 // 1 computing, 2 no, 3 yes
	sums      map[sumKey]*summary
}

type sumKey struct {
	fn  *ssa.Function
	idx int  // parameter or free variable index
	fv  bool // idx is a free variable
}

// summary says where a value entering a function goes.
type summary struct {
	output  bool // it reaches an output inside the function
	returns bool // it reaches a result
}

// buildFlow builds the SSA form of pass's package, with debug references so
// that syntax maps to values.
func buildFlow(pass *analysis.Pass) *flow {
	prog := ssa.NewProgram(pass.Fset, ssa.GlobalDebug)
	for _, p := range pass.Pkg.Imports() {
		prog.CreatePackage(p, nil, nil, true)
	}
	pkg := prog.CreatePackage(pass.Pkg, pass.Files, pass.TypesInfo, false)
	pkg.Build()
	f := &flow{
		pkg: pkg, exprs: map[ast.Expr]ssa.Value{}, addrs: map[ast.Expr]ssa.Value{}, calls: map[*ssa.Function][]*ssa.Call{},
		addrTaken: map[*ssa.Function]bool{}, retOut: map[*ssa.Function]int8{}, sums: map[sumKey]*summary{},
	}
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		f.funcs = append(f.funcs, fn)
		for _, a := range fn.AnonFuncs {
			add(a)
		}
	}
	for _, m := range pkg.Members {
		switch m := m.(type) {
		case *ssa.Function:
			add(m)
		case *ssa.Type:
			for _, t := range []types.Type{m.Type(), types.NewPointer(m.Type())} {
				ms := prog.MethodSets.MethodSet(t)
				for i := range ms.Len() {
					if fn := prog.MethodValue(ms.At(i)); fn != nil && fn.Pkg == pkg && fn.Synthetic == "" {
						add(fn)
					}
				}
			}
		}
	}
	seen := map[*ssa.Function]bool{}
	uniq := f.funcs[:0]
	for _, fn := range f.funcs {
		if !seen[fn] {
			seen[fn] = true
			uniq = append(uniq, fn)
		}
	}
	f.funcs = uniq
	for _, fn := range f.funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if ref, ok := instr.(*ssa.DebugRef); ok {
					m := f.exprs
					if ref.IsAddr {
						m = f.addrs
					}
					if _, dup := m[ref.Expr]; !dup {
						m[ref.Expr] = ref.X
					}
					continue
				}
				var static *ssa.Function
				if call, ok := instr.(*ssa.Call); ok {
					if callee, ok := call.Call.Value.(*ssa.Function); ok {
						static = callee
						f.calls[callee] = append(f.calls[callee], call)
					}
				}
				var ops [8]*ssa.Value
				for _, op := range instr.Operands(ops[:0]) {
					if g, ok := (*op).(*ssa.Function); ok && g != static && g.Pkg == pkg {
						f.addrTaken[g] = true
					}
				}
			}
		}
	}
	return f
}

// reach says whether values entering fn (seeds) or memory they are stored
// in can reach an output. Results of fn count as outputs when every caller
// could see them (see returnsOut).
func (f *flow) reach(fn *ssa.Function, seeds ...ssa.Value) bool {
	w := f.walk(fn, seeds)
	return w.output || w.returns && f.returnsOut(fn)
}

// returnsOut reports whether the results of fn reach an output: always for
// exported functions, methods, closures and functions used as values; for
// an unexported function, when the result of one of its calls does.
func (f *flow) returnsOut(fn *ssa.Function) bool {
	switch f.retOut[fn] {
	case 1, 2:
		return false
	case 3:
		return true
	}
	if fn.Parent() != nil || fn.Signature.Recv() != nil || f.addrTaken[fn] || fn.Object() == nil ||
		fn.Object().Exported() || len(f.calls[fn]) == 0 {
		f.retOut[fn] = 3
		return true
	}
	f.retOut[fn] = 1
	out := false
	for _, call := range f.calls[fn] {
		if f.reach(call.Parent(), call) {
			out = true
			break
		}
	}
	f.retOut[fn] = 2
	if out {
		f.retOut[fn] = 3
	}
	return out
}

// summarize follows parameter (or free variable) idx of fn.
func (f *flow) summarize(fn *ssa.Function, idx int, fv bool) *summary {
	k := sumKey{fn, idx, fv}
	if s, ok := f.sums[k]; ok {
		return s
	}
	s := &summary{}
	f.sums[k] = s // recursion sees "nothing" until done
	var seed ssa.Value
	switch {
	case fv && idx < len(fn.FreeVars):
		seed = fn.FreeVars[idx]
	case !fv && idx < len(fn.Params):
		seed = fn.Params[idx]
	default:
		s.output = true
		return s
	}
	w := f.walk(fn, []ssa.Value{seed})
	s.output, s.returns = w.output, w.returns
	return s
}

// walker is one forward walk over the values of one function.
type walker struct {
	f       *flow
	fn      *ssa.Function
	seen    map[ssa.Value]bool
	queue   []ssa.Value
	output  bool
	returns bool
	ifs     []*ssa.If // branches on a followed value
}

const walkLimit = 20000

func (f *flow) walk(fn *ssa.Function, seeds []ssa.Value) *walker {
	w := &walker{f: f, fn: fn, seen: map[ssa.Value]bool{}}
	for _, s := range seeds {
		w.add(s)
	}
	return w.run()
}

// run follows the queued values until none is left or an output is
// reached.
func (w *walker) run() *walker {
	for len(w.queue) > 0 && !w.output {
		if len(w.seen) > walkLimit {
			w.output = true // too big to follow: assume the worst
			break
		}
		v := w.queue[len(w.queue)-1]
		w.queue = w.queue[:len(w.queue)-1]
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, instr := range *refs {
			w.visit(v, instr)
		}
	}
	return w
}

func (w *walker) add(v ssa.Value) {
	if v == nil || w.seen[v] {
		return
	}
	w.seen[v] = true
	w.queue = append(w.queue, v)
}

func (w *walker) visit(v ssa.Value, instr ssa.Instruction) {
	switch in := instr.(type) {
	case *ssa.Return:
		if in.Parent() == w.fn {
			w.returns = true
		} else if w.f.returnsOut(in.Parent()) {
			w.output = true
		}
	case *ssa.Store:
		if in.Val == v {
			w.mark(in.Addr)
		}
		if ia, ok := in.Addr.(*ssa.IndexAddr); ok && in.Addr == v && w.seen[ia.Index] {
			w.mark(ia.X) // xs[i] = ... at a nondeterministic index
		}
	case *ssa.MapUpdate:
		if in.Key == v || in.Value == v {
			w.mark(in.Map)
		}
	case *ssa.Send:
		if in.X == v {
			w.output = true
		}
	case *ssa.Select:
		for _, st := range in.States {
			if st.Send == v {
				w.output = true
			}
		}
		w.add(in)
	case *ssa.If:
		w.ifs = append(w.ifs, in)
	case *ssa.Call:
		w.call(in, in.Common(), v)
	case *ssa.Go:
		w.call(nil, in.Common(), v)
	case *ssa.Defer:
		w.call(nil, in.Common(), v)
	case *ssa.MakeClosure:
		for i, b := range in.Bindings {
			if b == v {
				fn := in.Fn.(*ssa.Function)
				if w.f.summarize(fn, i, true).output {
					w.output = true
				}
			}
		}
		w.add(in)
	case *ssa.DebugRef, *ssa.Jump, *ssa.Panic, *ssa.RunDefers:
	case ssa.Value:
		w.add(in)
	}
}

// posOf returns a position for a use of a source: the instruction's, the
// value's, or the function's.
func posOf(v ssa.Value, fn *ssa.Function, instr ssa.Instruction) token.Pos {
	if p := instr.Pos(); p.IsValid() {
		return p
	}
	if v != nil && v.Pos().IsValid() {
		return v.Pos()
	}
	return fn.Pos()
}

// reachesOutput reports whether the variable target is rooted at (x for
// x, x.f, x[i], &x) can carry what is written into it to an output, judged
// from its uses in body. Unknown targets are assumed to reach one.
func (c *checker) reachesOutput(body *ast.BlockStmt, target ast.Expr) bool {
	root := rootIdent(target)
	if root == nil || body == nil {
		return true
	}
	obj := c.objOf(root)
	if _, ok := obj.(*types.Var); !ok {
		return true
	}
	known := false
	out := false
	ast.Inspect(body, func(n ast.Node) bool {
		if _, lit := n.(*ast.FuncLit); lit {
			return false // uses in closures are reached through the captured variable
		}
		id, ok := n.(*ast.Ident)
		if out || !ok || c.pass.TypesInfo.Uses[id] != obj {
			return !out
		}
		for _, m := range []map[ast.Expr]ssa.Value{c.flow.exprs, c.flow.addrs} {
			v, ok := m[id]
			if !ok {
				continue
			}
			known = true
			if c.flow.reachTarget(v) {
				out = true
			}
		}
		return !out
	})
	return out || !known
}

// reachTarget reports whether v, or what is written into memory v refers
// to, can reach an output. A package-level variable is one.
func (f *flow) reachTarget(v ssa.Value) bool {
	if v.Parent() == nil {
		return true
	}
	w := &walker{f: f, fn: v.Parent(), seen: map[ssa.Value]bool{}}
	w.add(v)
	w.mark(v)
	w.run()
	return w.output || w.returns && f.returnsOut(v.Parent())
}
