package detvet

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

const sortHint = "collect the keys, sort them (slices.Sorted(maps.Keys(m))) and range over them"

// mapLoop is the analysis of one range statement over a map.
type mapLoop struct {
	c     *checker
	span  ast.Node       // the range statement, or the call of sync.Map.Range
	key   *ast.Ident     // the key variable, if the loop defines one
	body  *ast.BlockStmt // of the enclosing function
	t     *taint
	brk   bool // the loop can stop early with break
	label string
}

// checkMapRange flags a range over a map (or over maps.Keys, maps.Values,
// maps.All) whose body lets the iteration order reach output.
func (c *checker) checkMapRange(cur inspector.Cursor, rs *ast.RangeStmt) {
	if !c.isMap(rs.X) && !c.isMapsIter(rs.X) {
		return
	}
	l := &mapLoop{c: c, span: rs, body: enclosingBody(cur), t: &taint{c: c, objs: map[types.Object]bool{}}}
	if k, ok := rs.Key.(*ast.Ident); ok && rs.Tok == token.DEFINE && k.Name != "_" {
		l.key = k
	}
	if ls, ok := cur.Parent().Node().(*ast.LabeledStmt); ok {
		l.label = ls.Label.Name
	}
	if k, ok := rs.Key.(*ast.Ident); ok {
		l.t.add(k)
	}
	if v, ok := rs.Value.(*ast.Ident); ok {
		l.t.add(v)
	}
	l.t.propagate(rs.Body)
	l.brk = l.breaks(rs.Body, false)
	l.walk(rs.Body, false, false)
}

// breaks reports whether body has a break that leaves the loop.
func (l *mapLoop) breaks(n ast.Node, nested bool) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if found || x == nil {
			return false
		}
		switch s := x.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			if x != n {
				var body ast.Node
				switch s := s.(type) {
				case *ast.ForStmt:
					body = s.Body
				case *ast.RangeStmt:
					body = s.Body
				case *ast.SwitchStmt:
					body = s.Body
				case *ast.TypeSwitchStmt:
					body = s.Body
				case *ast.SelectStmt:
					body = s.Body
				}
				if l.breaks(body, true) {
					found = true
				}
				return false
			}
		case *ast.BranchStmt:
			if s.Tok == token.BREAK && (s.Label == nil && !nested || s.Label != nil && s.Label.Name == l.label) {
				found = true
			}
		}
		return true
	})
	return found
}

// outer reports whether id denotes a variable declared outside the loop.
func (l *mapLoop) outer(id *ast.Ident) bool {
	if id == nil {
		return true // rooted at a call result or similar: assume it escapes
	}
	o := l.c.objOf(id)
	if o == nil {
		return false
	}
	if _, ok := o.(*types.Var); !ok {
		return false
	}
	return o.Pos() < l.span.Pos() || o.Pos() >= l.span.End()
}

// walk visits the loop body looking for sinks. cond is set under a
// condition or inner loop, lit inside a function literal.
func (l *mapLoop) walk(n ast.Node, cond, lit bool) {
	ast.Inspect(n, func(x ast.Node) bool {
		switch s := x.(type) {
		case nil:
			return false
		case *ast.FuncLit:
			l.walk(s.Body, true, true)
			return false
		case *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.ForStmt, *ast.RangeStmt:
			if is, ok := x.(*ast.IfStmt); ok {
				l.negatedCallback(is)
			}
			if x != n && !cond {
				l.walk(x, true, lit)
				return false
			}
		case *ast.AssignStmt:
			l.assign(s, cond)
		case *ast.ReturnStmt:
			if !lit {
				for _, r := range s.Results {
					if l.t.mentions(r) {
						l.c.report(s, catMapOrder, "return inside a range over a map returns whichever entry comes first, which is random; %s", sortHint)
						break
					}
				}
			}
		case *ast.SendStmt:
			if l.t.mentions(s.Value) {
				l.c.report(s, catMapOrder, "send on %s inside a range over a map sends in random order; %s", types.ExprString(s.Chan), sortHint)
			}
		case *ast.ExprStmt:
			if call, ok := ast.Unparen(s.X).(*ast.CallExpr); ok {
				l.callback(call)
			}
		case *ast.CallExpr:
			l.write(s)
		}
		return true
	})
}

// assign checks an assignment in the loop body.
func (l *mapLoop) assign(s *ast.AssignStmt, cond bool) {
	if s.Tok == token.DEFINE {
		return
	}
	for i, lhs := range s.Lhs {
		rhs := s.Rhs[0]
		if len(s.Lhs) == len(s.Rhs) {
			rhs = s.Rhs[i]
		}
		lhs = ast.Unparen(lhs)
		root := rootIdent(lhs)
		if !l.outer(root) {
			continue
		}
		name := types.ExprString(lhs)
		if call, ok := ast.Unparen(rhs).(*ast.CallExpr); ok && s.Tok == token.ASSIGN && l.c.isBuiltin(call, "append") {
			if l.keyedByRangeKey(lhs) {
				continue // dst[k] = append(dst[k], ...): each element is appended to once
			}
			if len(call.Args) > 1 && l.t.mentions(&ast.CallExpr{Fun: call.Fun, Args: call.Args[1:]}) &&
				!l.c.sortedAfter(name, l.body, l.span.End()) && l.c.reachesOutput(l.body, lhs) {
				l.c.report(call, catMapOrder, "append to %s inside a range over a map stores the entries in random order and %s is not sorted afterwards; sort it after the loop, or %s", name, name, sortHint)
			}
			continue
		}
		if !l.t.mentions(rhs) {
			continue
		}
		switch s.Tok {
		case token.ADD_ASSIGN, token.SUB_ASSIGN, token.MUL_ASSIGN, token.QUO_ASSIGN:
			var b *types.Basic
			if lt := l.c.pass.TypesInfo.TypeOf(lhs); lt != nil {
				b, _ = lt.Underlying().(*types.Basic)
			}
			switch {
			case b == nil:
			case !l.c.reachesOutput(l.body, lhs):
			case b.Info()&types.IsString != 0:
				l.c.report(s, catMapOrder, "%s is built by concatenation inside a range over a map, in random order; %s", name, sortHint)
			case b.Info()&(types.IsFloat|types.IsComplex) != 0:
				l.c.report(s, catMapOrder, "floating-point accumulation into %s inside a range over a map: rounding depends on the random order; %s", name, sortHint)
			}
		case token.ASSIGN:
			if ix, ok := lhs.(*ast.IndexExpr); ok {
				if l.c.isMap(ix.X) || l.t.mentions(ix.Index) {
					continue // keyed by the entry: placement does not depend on order
				}
				if !l.c.sortedAfter(types.ExprString(ix.X), l.body, l.span.End()) && l.c.reachesOutput(l.body, ix.X) {
					l.c.report(s, catMapOrder, "store into %s inside a range over a map fills it in random order and it is not sorted afterwards; %s", types.ExprString(ix.X), sortHint)
				}
				continue
			}
			if se, ok := ast.Unparen(rhs).(*ast.SliceExpr); ok && types.ExprString(se.X) == name {
				continue // x = x[n:]: consuming a buffer, not keeping an entry
			}
			if (!cond || l.brk) && l.c.reachesOutput(l.body, lhs) {
				which := "last"
				if l.brk {
					which = "first"
				}
				l.c.report(s, catMapOrder, "assignment to %s inside a range over a map keeps the %s entry visited, which is random; %s", name, which, sortHint)
			}
		}
	}
}

// writers are the methods that write their arguments to the receiver in
// call order: writers, encoders, hashes and tapes.
var writers = map[string]bool{
	"Write": true, "WriteString": true, "WriteByte": true, "WriteRune": true,
	"Encode": true, "Emit": true, "EmitRaw": true,
}

// write checks a call in the loop body that writes to something outside
// the loop.
func (l *mapLoop) write(call *ast.CallExpr) {
	pkg, name, method, ok := l.c.callee(call)
	if !ok {
		return
	}
	var dst ast.Expr
	args := call.Args
	switch {
	case method && writers[name]:
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return
		}
		dst = sel.X
	case pkg == "fmt" && (name == "Fprint" || name == "Fprintf" || name == "Fprintln"),
		pkg == "io" && name == "WriteString",
		pkg == "encoding/binary" && name == "Write":
		if len(args) == 0 {
			return
		}
		dst, args = args[0], args[1:]
	case pkg == "fmt" && (name == "Print" || name == "Printf" || name == "Println"):
	default:
		return
	}
	if dst != nil && (!l.outer(rootIdent(dst)) || !l.c.reachesOutput(l.body, dst)) {
		return // a writer local to the iteration, or one that reaches no output
	}
	for _, a := range args {
		if l.t.mentions(a) {
			what := "output"
			if dst != nil {
				what = types.ExprString(dst)
			}
			l.c.report(call, catMapOrder, "%s writes to %s inside a range over a map, in random order; %s", name, what, sortHint)
			return
		}
	}
}

// negatedCallback checks the condition of if !yield(k, v) { ... }.
func (l *mapLoop) negatedCallback(is *ast.IfStmt) {
	if u, ok := ast.Unparen(is.Cond).(*ast.UnaryExpr); ok && u.Op == token.NOT {
		if call, ok := ast.Unparen(u.X).(*ast.CallExpr); ok {
			l.callback(call)
		}
	}
}

// callback checks a call of a function-typed variable (yield, a visitor,
// a report hook) with an argument that depends on the entry, made as a
// statement or as the negated condition of an if (if !yield(k, v)).
// Function variables whose result is used otherwise are taken to be pure
// (predicates, transformers) and are not callbacks.
func (l *mapLoop) callback(call *ast.CallExpr) {
	v, ok := typeutil.Callee(l.c.pass.TypesInfo, call).(*types.Var)
	if !ok {
		return
	}
	if _, ok := v.Type().Underlying().(*types.Signature); !ok {
		return
	}
	for _, a := range call.Args {
		if l.t.mentions(a) {
			l.c.report(call, catMapOrder, "call of %s inside a range over a map hands the entries over in random order; %s", v.Name(), sortHint)
			return
		}
	}
}

// keyedByRangeKey reports whether lhs is m[k] for a map m and the loop's
// own key variable k, which takes each value once.
func (l *mapLoop) keyedByRangeKey(lhs ast.Expr) bool {
	ix, ok := lhs.(*ast.IndexExpr)
	if !ok || !l.c.isMap(ix.X) {
		return false
	}
	id, ok := ast.Unparen(ix.Index).(*ast.Ident)
	return ok && l.key != nil && l.c.objOf(id) == l.c.objOf(l.key)
}

// checkSyncMapRange flags a call of sync.Map.Range whose callback lets the
// order of the entries reach output, as for a range over a map; a return
// of false from the callback stops the iteration like a break.
func (c *checker) checkSyncMapRange(cur inspector.Cursor, call *ast.CallExpr) {
	pkg, name, method, ok := c.callee(call)
	if !ok || !method || pkg != "sync" || name != "Range" || len(call.Args) != 1 {
		return
	}
	lit, ok := ast.Unparen(call.Args[0]).(*ast.FuncLit)
	if !ok {
		return
	}
	l := &mapLoop{c: c, span: call, body: enclosingBody(cur), t: &taint{c: c, objs: map[types.Object]bool{}}}
	var params []*ast.Ident
	for _, f := range lit.Type.Params.List {
		params = append(params, f.Names...)
	}
	for i, p := range params {
		if i == 0 && p.Name != "_" {
			l.key = p
		}
		l.t.add(p)
	}
	l.t.propagate(lit.Body)
	l.brk = anyNode(lit.Body, func(n ast.Node) bool {
		r, ok := n.(*ast.ReturnStmt)
		if !ok || len(r.Results) != 1 {
			return false
		}
		id, ok := ast.Unparen(r.Results[0]).(*ast.Ident)
		return !ok || id.Name != "true"
	})
	l.walk(lit.Body, false, true)
}
