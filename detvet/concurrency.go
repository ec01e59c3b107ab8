package detvet

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ast/inspector"
)

// checkSelect flags a select with two or more communication cases that
// can be ready together, when which one runs can reach an output: the
// runtime picks among ready cases at random.
func (c *checker) checkSelect(cur inspector.Cursor, s *ast.SelectStmt) {
	var live []*ast.CommClause
	for _, cl := range s.Body.List {
		cc, ok := cl.(*ast.CommClause)
		if !ok || cc.Comm == nil || neverReady(c, commChan(cc.Comm)) {
			continue
		}
		live = append(live, cc)
	}
	if len(live) < 2 {
		return
	}
	if !slices.ContainsFunc(live, func(cc *ast.CommClause) bool { return c.clauseMatters(cc) }) {
		return // every case does nothing an output can see
	}
	body := enclosingBody(cur)
	if c.oneProducer(body, live) {
		return
	}
	c.report(s, catSelect, "select with %d communication cases picks one at random when several are ready; receive in a fixed order, or make at most one case ready at a time", len(live))
}

// commChan returns the channel a select case sends on or receives from.
func commChan(s ast.Stmt) ast.Expr {
	var e ast.Expr
	switch s := s.(type) {
	case *ast.SendStmt:
		return s.Chan
	case *ast.ExprStmt:
		e = s.X
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			e = s.Rhs[0]
		}
	}
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
		return u.X
	}
	return nil
}

// neverReady reports whether ch is a channel no case can ever be ready on:
// nil, or the Done channel of context.Background or context.TODO.
func neverReady(c *checker, ch ast.Expr) bool {
	ch = ast.Unparen(ch)
	if id, ok := ch.(*ast.Ident); ok {
		_, isNil := c.pass.TypesInfo.Uses[id].(*types.Nil)
		return isNil
	}
	call, ok := ch.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Done" {
		return false
	}
	inner, ok := ast.Unparen(sel.X).(*ast.CallExpr)
	if !ok {
		return false
	}
	pkg, name, method, ok := c.callee(inner)
	return ok && !method && pkg == "context" && (name == "Background" || name == "TODO")
}

// clauseMatters reports whether running the case can change what reaches
// an output: it returns a value, assigns a variable declared outside it,
// sends, or calls something other than a logger.
func (c *checker) clauseMatters(cc *ast.CommClause) bool {
	return anyNode(&ast.BlockStmt{List: cc.Body}, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ReturnStmt:
			return len(n.Results) > 0
		case *ast.SendStmt, *ast.GoStmt:
			return true
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id := rootIdent(l); id == nil || id.Name != "_" && c.declaredOutside(id, cc) {
					return true
				}
			}
		case *ast.IncDecStmt:
			id := rootIdent(n.X)
			return id == nil || c.declaredOutside(id, cc)
		case *ast.CallExpr:
			return !c.logs(n) && !c.isBuiltin(n, "len") && !c.isBuiltin(n, "cap")
		}
		return false
	})
}

// declaredOutside reports whether id denotes a variable declared outside n.
func (c *checker) declaredOutside(id *ast.Ident, n ast.Node) bool {
	o, ok := c.objOf(id).(*types.Var)
	return ok && (o.Pos() < n.Pos() || o.Pos() >= n.End())
}

// logs reports whether call is a call of a logging function or method, a
// fmt.Fprint* to os.Stderr, or a conversion.
func (c *checker) logs(call *ast.CallExpr) bool {
	if tv, ok := c.pass.TypesInfo.Types[call.Fun]; ok && tv.IsType() {
		return true
	}
	pkg, name, _, ok := c.callee(call)
	if !ok {
		return false
	}
	if isTelemetry(pkg) {
		return true
	}
	if pkg == "fmt" && strings.HasPrefix(name, "Fprint") && len(call.Args) > 0 {
		if sel, ok := ast.Unparen(call.Args[0]).(*ast.SelectorExpr); ok && sel.Sel.Name == "Stderr" {
			if v, ok := c.pass.TypesInfo.Uses[sel.Sel].(*types.Var); ok && v.Pkg() != nil && v.Pkg().Path() == "os" {
				return true
			}
		}
	}
	return false
}

// oneProducer reports whether the cases cannot be ready together because
// they all receive from channels made in body that only one goroutine,
// started once in body, sends on or closes, at most once on any path:
// the "result or error" shape.
func (c *checker) oneProducer(body *ast.BlockStmt, cases []*ast.CommClause) bool {
	if body == nil {
		return false
	}
	chans := map[types.Object]bool{}
	for _, cc := range cases {
		if _, send := cc.Comm.(*ast.SendStmt); send {
			return false
		}
		id, ok := ast.Unparen(commChan(cc.Comm)).(*ast.Ident)
		if !ok {
			return false
		}
		chans[c.objOf(id)] = true
	}
	// Every channel is made in body; find the one goroutine that writes.
	var producer *ast.FuncLit
	ok := true
	inLoop := 0
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		if !ok || n == nil {
			return false
		}
		switch n := n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			inLoop++
			ast.Inspect(n, func(m ast.Node) bool {
				if m == n {
					return true
				}
				return visit(m)
			})
			inLoop--
			return false
		case *ast.GoStmt:
			if lit, isLit := ast.Unparen(n.Call.Fun).(*ast.FuncLit); isLit && c.mentionsAny(lit, chans) {
				if producer != nil || inLoop > 0 {
					ok = false
				}
				producer = lit
				return false
			}
		case *ast.SendStmt:
			if id, isID := ast.Unparen(n.Chan).(*ast.Ident); isID && chans[c.objOf(id)] {
				ok = false // a send outside the goroutine
			}
		case *ast.CallExpr:
			if c.isBuiltin(n, "close") || !c.isBuiltin(n, "make") {
				for _, a := range n.Args {
					if id, isID := ast.Unparen(a).(*ast.Ident); isID && chans[c.objOf(id)] {
						ok = false // passed on: written who knows where
					}
				}
			}
		case *ast.FuncLit:
			if c.mentionsAny(n, chans) {
				ok = false
			}
			return false
		}
		return true
	}
	ast.Inspect(body, visit)
	if !ok || producer == nil {
		return false
	}
	for o := range chans {
		if o == nil || o.Pos() < body.Pos() || o.Pos() >= body.End() {
			return false // not made here
		}
	}
	fall, exit, ok := c.writes(producer.Body.List, 0, chans)
	return ok && max(fall, exit) <= 1
}

// mentionsAny reports whether n refers to one of objs.
func (c *checker) mentionsAny(n ast.Node, objs map[types.Object]bool) bool {
	return anyNode(n, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		return ok && objs[c.objOf(id)]
	})
}

// writes counts the sends on and closes of chans along the paths of a
// statement list, starting from n: the most on a path that falls through
// its end, and the most on one that returns. ok is false when the list
// writes in a way it does not follow (in a loop, a switch, a defer).
func (c *checker) writes(list []ast.Stmt, n int, chans map[types.Object]bool) (fall, exit int, ok bool) {
	fall, exit = n, -1
	for _, st := range list {
		if fall < 0 {
			break // unreachable
		}
		switch st := st.(type) {
		case *ast.SendStmt:
			if c.mentionsAny(st.Chan, chans) {
				fall++
			}
		case *ast.ExprStmt:
			if call, isCall := ast.Unparen(st.X).(*ast.CallExpr); isCall && c.isBuiltin(call, "close") && c.mentionsAny(call, chans) {
				fall++
			} else if c.mentionsAny(st, chans) {
				return 0, 0, false
			}
		case *ast.ReturnStmt:
			if c.mentionsAny(st, chans) {
				return 0, 0, false
			}
			exit, fall = max(exit, fall), -1
		case *ast.IfStmt:
			if st.Init != nil && c.mentionsAny(st.Init, chans) || c.mentionsAny(st.Cond, chans) {
				return 0, 0, false
			}
			f1, e1, ok1 := c.writes(st.Body.List, fall, chans)
			f2, e2, ok2 := fall, -1, true
			switch e := st.Else.(type) {
			case *ast.BlockStmt:
				f2, e2, ok2 = c.writes(e.List, fall, chans)
			case *ast.IfStmt:
				f2, e2, ok2 = c.writes([]ast.Stmt{e}, fall, chans)
			}
			if !ok1 || !ok2 {
				return 0, 0, false
			}
			fall, exit = max(f1, f2), max(exit, e1, e2)
		case *ast.BlockStmt:
			f, e, ok := c.writes(st.List, fall, chans)
			if !ok {
				return 0, 0, false
			}
			fall, exit = f, max(exit, e)
		default:
			if c.mentionsAny(st, chans) {
				return 0, 0, false
			}
		}
	}
	return fall, exit, true
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
// after starting the goroutine, or the goroutine is started once (not in a
// loop) and is the only code of the enclosing function that appends to the
// slice: its appends then follow its own program order.
func (c *checker) checkGoroutine(cur inspector.Cursor, lit *ast.FuncLit, after token.Pos) {
	body := enclosingBody(cur)
	once := !inLoop(cur)
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
			if c.sortedAfter(name, body, after) || !c.reachesOutput(body, s.Lhs[i]) {
				continue
			}
			if once && !c.appendsOutside(body, lit, name) {
				continue
			}
			c.report(call, catGoAppend, "goroutine appends to shared slice %s: the order depends on scheduling; write results by index (%s[i] = ...) or sort %s after the goroutines finish", name, name, name)
		}
		return true
	})
}

// inLoop reports whether the statement at cur runs in a for or range loop
// of its enclosing function.
func inLoop(cur inspector.Cursor) bool {
	for e := range cur.Enclosing((*ast.ForStmt)(nil), (*ast.RangeStmt)(nil), (*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		switch e.Node().(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			return true
		default:
			return false
		}
	}
	return false
}

// appendsOutside reports whether body, outside lit, assigns an append to
// the slice spelt name.
func (c *checker) appendsOutside(body *ast.BlockStmt, lit *ast.FuncLit, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found || n == lit {
			return false
		}
		s, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, rhs := range s.Rhs {
			if call, ok := ast.Unparen(rhs).(*ast.CallExpr); ok && c.isBuiltin(call, "append") && i < len(s.Lhs) && types.ExprString(s.Lhs[i]) == name {
				found = true
			}
		}
		return true
	})
	return found
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
	if v, ok := c.flow.exprs[call]; ok && !c.flow.reachTarget(v) {
		return
	}
	c.report(call, catMapOrder, "slices.%s over a map iterator yields the entries in random order; use slices.Sorted(maps.Keys(m)) or sort the result", name)
}
