package detvet

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/inspector"
)

// checkSort flags sort.Slice, sort.Sort and slices.SortFunc when the
// comparator can tie on different elements (it compares some fields of a
// struct element and not others, or a value derived from a plain
// element) and the sorted slice reaches an output: these sorts are not
// stable, so tied elements come out in an order the algorithm decides,
// which can change between Go releases.
func (c *checker) checkSort(cur inspector.Cursor, call *ast.CallExpr) {
	pkg, name, method, ok := c.callee(call)
	if !ok || method || len(call.Args) == 0 {
		return
	}
	var elem types.Type
	var cmpBody *ast.BlockStmt
	var params []*ast.Ident
	switch {
	case pkg == "sort" && name == "Slice" && len(call.Args) == 2,
		pkg == "slices" && name == "SortFunc" && len(call.Args) == 2:
		if s, ok := c.pass.TypesInfo.TypeOf(call.Args[0]).Underlying().(*types.Slice); ok {
			elem = s.Elem()
		}
		cmpBody, params = c.funcBody(call.Args[1])
	case pkg == "sort" && name == "Sort" && len(call.Args) == 1:
		t := c.pass.TypesInfo.TypeOf(call.Args[0])
		if mi, ok := ast.Unparen(call.Args[0]).(*ast.CallExpr); ok && len(mi.Args) == 1 {
			t = c.pass.TypesInfo.TypeOf(mi) // sort.Sort(byScore(xs))
		}
		if s, ok := t.Underlying().(*types.Slice); ok {
			elem = s.Elem()
		}
		cmpBody, params = c.lessMethod(t)
	default:
		return
	}
	if elem == nil || cmpBody == nil || len(params) < 2 {
		return
	}
	loose := c.looseFields(elem, cmpBody, params)
	if loose == "" {
		return
	}
	if !c.reachesOutput(enclosingBody(cur), call.Args[0]) {
		return
	}
	c.report(call, catSort, "%s.%s is not stable and its comparator %s, so tied elements come out in an order the sort algorithm decides, which can change with the Go release; use %s, or break ties on a unique field", pkg, name, loose, stableOf(pkg, name))
}

func stableOf(pkg, name string) string {
	switch {
	case pkg == "slices":
		return "slices.SortStableFunc"
	case name == "Sort":
		return "sort.Stable"
	}
	return "sort.SliceStable"
}

// funcBody returns the body and parameters of a function literal or of a
// package-level function of this package.
func (c *checker) funcBody(e ast.Expr) (*ast.BlockStmt, []*ast.Ident) {
	switch e := ast.Unparen(e).(type) {
	case *ast.FuncLit:
		return e.Body, paramNames(e.Type)
	case *ast.Ident:
		if fn, ok := c.pass.TypesInfo.Uses[e].(*types.Func); ok {
			if d := c.funcDecl(fn); d != nil {
				return d.Body, paramNames(d.Type)
			}
		}
	}
	return nil, nil
}

// lessMethod returns the body and parameters of t's Less method, if it is
// declared in this package.
func (c *checker) lessMethod(t types.Type) (*ast.BlockStmt, []*ast.Ident) {
	obj, _, _ := types.LookupFieldOrMethod(t, true, c.pass.Pkg, "Less")
	fn, ok := obj.(*types.Func)
	if !ok {
		return nil, nil
	}
	if d := c.funcDecl(fn); d != nil {
		return d.Body, paramNames(d.Type)
	}
	return nil, nil
}

func (c *checker) funcDecl(fn *types.Func) *ast.FuncDecl {
	for _, f := range c.pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && c.pass.TypesInfo.Defs[fd.Name] == fn && fd.Body != nil {
				return fd
			}
		}
	}
	return nil
}

func paramNames(ft *ast.FuncType) []*ast.Ident {
	var out []*ast.Ident
	for _, f := range ft.Params.List {
		out = append(out, f.Names...)
	}
	return out
}

// looseFields says how the comparator can tie on different elements, or
// returns "" when it cannot: for a struct element, the fields it never
// reads; for a plain element, that it never compares the elements
// themselves.
func (c *checker) looseFields(elem types.Type, body *ast.BlockStmt, params []*ast.Ident) string {
	base := elem
	if p, ok := base.Underlying().(*types.Pointer); ok {
		base = p.Elem()
	}
	isElem := func(e ast.Expr) bool {
		t := c.pass.TypesInfo.TypeOf(e)
		if t == nil {
			return false
		}
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		return types.Identical(t, base)
	}
	if st, ok := base.Underlying().(*types.Struct); ok {
		used := map[string]bool{}
		whole, key := false, false
		ast.Inspect(body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				// A field of the element (a.Score), or a field within one
				// (a.dom.pre): the first names the element's field used,
				// the last says whether the key identifies the element.
				sel := c.pass.TypesInfo.Selections[n]
				if sel == nil || sel.Kind() != types.FieldVal {
					return true
				}
				top := n
				for {
					inner, ok := ast.Unparen(top.X).(*ast.SelectorExpr)
					if s := c.pass.TypesInfo.Selections[inner]; !ok || s == nil || s.Kind() != types.FieldVal {
						break
					}
					top = inner
				}
				if isElem(top.X) {
					used[top.Sel.Name] = true
					if identifying(n.Sel.Name, sel.Type()) {
						key = true
					}
				}
			case *ast.BinaryExpr:
				if isElem(n.X) && isElem(n.Y) {
					whole = true // a == b on whole elements
				}
			}
			return true
		})
		if whole || key || len(used) == 0 {
			return ""
		}
		var missing []string
		for i := range st.NumFields() {
			if !used[st.Field(i).Name()] {
				missing = append(missing, st.Field(i).Name())
			}
		}
		if len(missing) == 0 {
			return ""
		}
		return "ignores " + strings.Join(missing, ", ")
	}
	if _, ok := base.Underlying().(*types.Basic); !ok {
		return ""
	}
	// A plain element: ties are harmless only between equal elements, so
	// the comparator must compare the elements themselves.
	direct := anyNode(body, func(n ast.Node) bool {
		var x, y ast.Expr
		switch n := n.(type) {
		case *ast.BinaryExpr:
			x, y = n.X, n.Y
		case *ast.CallExpr:
			if len(n.Args) == 2 {
				x, y = n.Args[0], n.Args[1]
			}
		}
		return x != nil && c.elemRef(x, params) && c.elemRef(y, params)
	})
	if direct {
		return ""
	}
	return "compares a value derived from the elements, not the elements"
}

// elemRef reports whether e is an element itself: a comparator parameter
// holding one (slices.SortFunc) or s[i] with an index parameter.
func (c *checker) elemRef(e ast.Expr, params []*ast.Ident) bool {
	e = ast.Unparen(e)
	is := func(id *ast.Ident) bool {
		for _, p := range params {
			if c.objOf(id) == c.pass.TypesInfo.Defs[p] {
				return true
			}
		}
		return false
	}
	switch e := e.(type) {
	case *ast.Ident:
		return is(e)
	case *ast.IndexExpr:
		id, ok := ast.Unparen(e.Index).(*ast.Ident)
		return ok && is(id)
	}
	return false
}

// identifying reports whether a field is taken to identify its element: a
// string, or a field whose name ends like an identifier or an ordinal (ID,
// Key, Seq, Index, Iter, Run, Version, Pos, Order, and the pre and post
// numbers of a tree walk). A comparator that compares one is
// assumed to be a total order.
func identifying(name string, t types.Type) bool {
	if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
		return true
	}
	n := strings.ToLower(name)
	for _, suffix := range []string{"id", "key", "seq", "index", "idx", "iter", "run", "version", "pos", "order", "pre", "post"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}
