package detvet

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

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

// isReader reports whether t is io.Reader.
func isReader(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "io" && n.Obj().Name() == "Reader"
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
		for _, b := range bindingsOf(a) {
			vars = append(vars, b)
		}
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

// call follows v into a call, go or defer (res is nil for the last two).
func (w *walker) call(res *ssa.Call, c *ssa.CallCommon, v ssa.Value) {
	addRes := func() {
		if res != nil {
			w.add(res)
		}
	}
	if c.Value == v && !c.IsInvoke() {
		addRes() // calling a nondeterministic function value
		return
	}
	if isLogger(c) {
		return
	}
	args := c.Args
	if c.IsInvoke() {
		args = append([]ssa.Value{c.Value}, c.Args...)
	}
	if b, ok := c.Value.(*ssa.Builtin); ok {
		switch b.Name() {
		case "append":
			addRes()
		case "copy":
			if len(args) == 2 && args[1] == v {
				w.mark(args[0])
			}
		case "print", "println", "len", "cap", "delete", "close", "clear", "panic":
		default:
			addRes()
		}
		return
	}
	callee := c.StaticCallee()
	if callee != nil && callee.Pkg == w.f.pkg && len(callee.Blocks) > 0 {
		for i, a := range args {
			if a != v {
				continue
			}
			s := w.f.summarize(callee, i, false)
			if s.output {
				w.output = true
			}
			if s.returns {
				addRes()
			}
		}
		return
	}
	addRes()
	var fn *types.Func
	switch {
	case c.IsInvoke():
		fn = c.Method
	case callee != nil:
		fn, _ = callee.Object().(*types.Func)
	}
	if fn == nil {
		w.output = true // a function value: a callback, a hook, yield
		return
	}
	path := ""
	if fn.Pkg() != nil {
		path = fn.Pkg().Path()
	}
	if sinkFuncs[path+"."+fn.Name()] {
		w.output = true
		return
	}
	recv := fn.Signature().Recv() != nil
	if !stdlib(path) {
		// Another package's API: an event tape, an SDK client, a request
		// builder. Passing the value to it is an output; calling a method
		// of the value itself only derives another.
		for i, a := range args {
			if a == v && !(recv && i == 0) {
				w.output = true
			}
		}
		return
	}
	if isReader(v.Type()) || recv && args[0] == v && fn.Name() == "Read" {
		for _, a := range args {
			if a != v && pointerLike(a.Type()) {
				w.mark(a) // io.ReadFull(r, buf), r.Read(buf): the reader fills buf
			}
		}
		return
	}
	switch {
	case recv:
		if args[0] != v && pointerLike(args[0].Type()) {
			w.mark(args[0]) // buf.WriteString(x), h.Write(x), hdr.Set(k, x)
		}
	case len(args) > 1 && args[0] != v && pointerLike(args[0].Type()):
		w.mark(args[0]) // fmt.Fprintf(w, ...), io.Copy(dst, src), maps.Copy(dst, src)
	case len(args) > 1 && args[1] != v && unmarshals(path, fn.Name()):
		w.mark(args[1])
	}
}

// sinkFuncs are standard-library calls whose arguments leave the process:
// files written and requests sent.
var sinkFuncs = map[string]bool{
	"os.WriteFile": true, "os.Create": true, "os.OpenFile": true, "os.Mkdir": true, "os.MkdirAll": true,
	"os.Rename": true, "os.Symlink": true, "os.Link": true, "os.Chmod": true, "os.Setenv": true,
	"net/http.Get": true, "net/http.Post": true, "net/http.PostForm": true, "net/http.Head": true,
	"net/http.Do": true,
}

// opensFile reports whether call opens a file for writing (os.Create,
// os.OpenFile, os.CreateTemp).
func opensFile(call *ssa.Call) bool {
	callee := call.Call.StaticCallee()
	if callee == nil {
		return false
	}
	fo, ok := callee.Object().(*types.Func)
	if !ok {
		return false
	}
	switch funcKey(fo) {
	case "os.Create", "os.OpenFile", "os.CreateTemp":
		return true
	}
	return false
}

func unmarshals(path, name string) bool {
	return strings.HasPrefix(path, "encoding/") && name == "Unmarshal"
}

// stdlib reports whether path is a standard-library import path.
func stdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// loggerPkgs are packages whose functions and methods only log.
var loggerPkgs = map[string]bool{
	"log": true, "log/slog": true,
	"go.uber.org/zap": true, "github.com/sirupsen/logrus": true, "github.com/rs/zerolog": true,
	"github.com/rs/zerolog/log": true, "github.com/go-logr/logr": true,
}

// isLogger reports whether c logs: a function or method of a logging
// package, fmt.Fprint* or a write to os.Stderr, or a test's Log method.
func isLogger(c *ssa.CallCommon) bool {
	var fn *types.Func
	if c.IsInvoke() {
		fn = c.Method
	} else if callee := c.StaticCallee(); callee != nil {
		fn, _ = callee.Object().(*types.Func)
	}
	if fn == nil || fn.Pkg() == nil {
		return false
	}
	path, name := fn.Pkg().Path(), fn.Name()
	if loggerPkgs[path] {
		return true
	}
	if path == "testing" && (strings.HasPrefix(name, "Log") || strings.HasPrefix(name, "Error") ||
		strings.HasPrefix(name, "Fatal") || strings.HasPrefix(name, "Skip")) {
		return true
	}
	var dst ssa.Value
	switch {
	case path == "fmt" && strings.HasPrefix(name, "Fprint") && len(c.Args) > 0:
		dst = c.Args[0]
	case path == "os" && strings.HasPrefix(name, "Write") && len(c.Args) > 0 && fn.Signature().Recv() != nil:
		dst = c.Args[0]
	default:
		return false
	}
	rs := roots(dst)
	for _, r := range rs {
		if g, ok := r.(*ssa.Global); !ok || !isStderr(g) {
			return false
		}
	}
	return len(rs) > 0
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
