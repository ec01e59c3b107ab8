package detvet

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/inspector"
)

// checkSelect flags a select with two or more communication cases: when
// several are ready, the runtime picks one at random.
func (c *checker) checkSelect(s *ast.SelectStmt) {
	n := 0
	for _, cl := range s.Body.List {
		if cc, ok := cl.(*ast.CommClause); ok && cc.Comm != nil {
			n++
		}
	}
	if n >= 2 {
		c.report(s, CategorySelect, "select with %d communication cases picks one at random when several are ready; receive in a fixed order, or make at most one case ready at a time", n)
	}
}

// checkGo checks the function literal a go statement starts.
func (c *checker) checkGo(cur inspector.Cursor, g *ast.GoStmt) {
	if lit, ok := ast.Unparen(g.Call.Fun).(*ast.FuncLit); ok {
		c.checkGoroutine(cur, lit, g.End())
	}
}

// checkGoMethod checks function literals passed to a method named Go
// (sync.WaitGroup.Go, errgroup.Group.Go and the like).
func (c *checker) checkGoMethod(cur inspector.Cursor, call *ast.CallExpr) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Go" {
		return
	}
	if s := c.pass.TypesInfo.Selections[sel]; s == nil || s.Kind() != types.MethodVal {
		return
	}
	for _, a := range call.Args {
		if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok {
			c.checkGoroutine(cur, lit, call.End())
		}
	}
}

// checkGoroutine flags appends, inside a goroutine's function literal, to a
// slice declared outside it, unless the enclosing function sorts that slice
// after starting the goroutine.
func (c *checker) checkGoroutine(cur inspector.Cursor, lit *ast.FuncLit, after token.Pos) {
	body := enclosingBody(cur)
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		s, ok := n.(*ast.AssignStmt)
		if !ok || s.Tok != token.ASSIGN {
			return true
		}
		for i, rhs := range s.Rhs {
			call, ok := ast.Unparen(rhs).(*ast.CallExpr)
			if !ok || !c.isBuiltin(call, "append") || i >= len(s.Lhs) {
				continue
			}
			root := rootIdent(s.Lhs[i])
			if root == nil {
				continue
			}
			o, ok := c.objOf(root).(*types.Var)
			if !ok || (o.Pos() >= lit.Pos() && o.Pos() < lit.End()) {
				continue // declared inside the goroutine
			}
			name := types.ExprString(s.Lhs[i])
			if c.sortedAfter(name, body, after) {
				continue
			}
			c.report(call, CategoryGoAppend, "goroutine appends to shared slice %s: the order depends on scheduling; write results by index (%s[i] = ...) or sort %s after the goroutines finish", name, name, name)
		}
		return true
	})
}

// checkCollect flags slices.Collect and slices.AppendSeq over maps.Keys,
// maps.Values or maps.All unless the result is sorted afterwards.
func (c *checker) checkCollect(cur inspector.Cursor, call *ast.CallExpr) {
	pkg, name, method, ok := c.callee(call)
	if !ok || method || pkg != "slices" || (name != "Collect" && name != "AppendSeq") || len(call.Args) == 0 {
		return
	}
	if !c.isMapsIter(call.Args[len(call.Args)-1]) {
		return
	}
	if as, ok := cur.Parent().Node().(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
		for i, r := range as.Rhs {
			if r == call && c.sortedAfter(types.ExprString(as.Lhs[i]), enclosingBody(cur), call.End()) {
				return
			}
		}
	}
	if vs, ok := cur.Parent().Node().(*ast.ValueSpec); ok && len(vs.Names) == len(vs.Values) {
		for i, r := range vs.Values {
			if r == call && c.sortedAfter(vs.Names[i].Name, enclosingBody(cur), call.End()) {
				return
			}
		}
	}
	c.report(call, CategoryMapOrder, "slices.%s over a map iterator yields the entries in random order; use slices.Sorted(maps.Keys(m)) or sort the result", name)
}
