package detvet

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// This file holds the small, SSA-free dataflow behind the map-order and
// goroutine checks. Its limits are documented in doc.go.

// enclosingBody returns the body of the innermost function declaration or
// literal around cur, or nil.
func enclosingBody(cur inspector.Cursor) *ast.BlockStmt {
	for e := range cur.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		switch f := e.Node().(type) {
		case *ast.FuncDecl:
			return f.Body
		case *ast.FuncLit:
			return f.Body
		}
	}
	return nil
}

// rootIdent returns the variable an lvalue or receiver expression is rooted
// at: x for x, x.f, x[i], x[i:j], *x, &x, (x); nil if there is none (e.g.
// f().g).
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.UnaryExpr:
			if x.Op != token.AND {
				return nil
			}
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// isBuiltin reports whether call calls the named builtin.
func (c *checker) isBuiltin(call *ast.CallExpr, name string) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return false
	}
	b, ok := c.pass.TypesInfo.Uses[id].(*types.Builtin)
	return ok && b.Name() == name
}

// callee returns the package path and name of the function or method call
// calls (for an interface method, the abstract method), and whether it is a
// method.
func (c *checker) callee(call *ast.CallExpr) (pkg, name string, method bool, ok bool) {
	fn, _ := typeutil.Callee(c.pass.TypesInfo, call).(*types.Func) // includes interface methods
	if fn == nil {
		return "", "", false, false
	}
	sig, _ := fn.Type().(*types.Signature)
	if fn.Pkg() != nil {
		pkg = fn.Pkg().Path()
	}
	return pkg, fn.Name(), sig != nil && sig.Recv() != nil, true
}

// isMapsIter reports whether e is a call of maps.Keys, maps.Values or
// maps.All, whose iteration order is the map's.
func (c *checker) isMapsIter(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	pkg, name, method, ok := c.callee(call)
	return ok && !method && pkg == "maps" && (name == "Keys" || name == "Values" || name == "All")
}

// isSortCall reports whether call sorts its first argument (or, for a
// method whose name starts with "sort", its receiver) in place.
func (c *checker) isSortCall(call *ast.CallExpr) (sorted ast.Expr, ok bool) {
	pkg, name, method, ok := c.callee(call)
	if !ok {
		return nil, false
	}
	switch {
	case pkg == "sort" && !method:
		switch name {
		case "Strings", "Ints", "Float64s", "Sort", "Stable", "Slice", "SliceStable":
		default:
			return nil, false
		}
	case pkg == "slices":
		switch name {
		case "Sort", "SortFunc", "SortStableFunc":
		default:
			return nil, false
		}
	case strings.HasPrefix(strings.ToLower(name), "sort") && name != "Sorted":
		// A helper such as sortEvents(xs) or byScore(xs).Sort().
		if method {
			if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
				return sel.X, true
			}
			return nil, false
		}
	default:
		return nil, false
	}
	if len(call.Args) == 0 {
		return nil, false
	}
	return call.Args[0], true
}

// sortedAfter reports whether body sorts the value written as target (a
// types.ExprString) in a call that starts at or after pos.
func (c *checker) sortedAfter(target string, body *ast.BlockStmt, pos token.Pos) bool {
	if body == nil {
		return false
	}
	return anyNode(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || call.Pos() < pos {
			return false
		}
		arg, ok := c.isSortCall(call)
		return ok && containsExpr(arg, target)
	})
}

// containsExpr reports whether e has a subexpression written as target.
func containsExpr(e ast.Expr, target string) bool {
	return anyNode(e, func(n ast.Node) bool {
		x, ok := n.(ast.Expr)
		return ok && types.ExprString(x) == target
	})
}

// anyNode reports whether p holds for some node of the tree rooted at n,
// stopping at the first.
func anyNode(n ast.Node, p func(ast.Node) bool) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if !found && x != nil && p(x) {
			found = true
		}
		return !found
	})
	return found
}

// taint is the set of variables whose value depends on which map entry the
// current iteration visits.
type taint struct {
	c    *checker
	objs map[types.Object]bool
}

func (t *taint) add(id *ast.Ident) bool {
	if id == nil || id.Name == "_" {
		return false
	}
	o := t.c.objOf(id)
	if o == nil || t.objs[o] {
		return false
	}
	t.objs[o] = true
	return true
}

// mentions reports whether n refers to a tainted variable.
func (t *taint) mentions(n ast.Node) bool {
	if n == nil {
		return false
	}
	return anyNode(n, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		return ok && t.objs[t.c.objOf(id)]
	})
}

// propagate taints, until nothing changes, every variable assigned in body
// from a tainted expression (flow-insensitively, ignoring control
// dependence).
func (t *taint) propagate(body ast.Node) {
	for range 16 {
		changed := false
		ast.Inspect(body, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.AssignStmt:
				for i, lhs := range s.Lhs {
					rhs := s.Rhs[0]
					if len(s.Lhs) == len(s.Rhs) {
						rhs = s.Rhs[i]
					}
					if !t.mentions(rhs) {
						continue
					}
					if ix, ok := ast.Unparen(lhs).(*ast.IndexExpr); ok && t.c.isMap(ix.X) {
						continue // m2[k] = v copies; it does not order m2
					}
					if t.add(rootIdent(lhs)) {
						changed = true
					}
				}
			case *ast.ValueSpec:
				for i, name := range s.Names {
					if i < len(s.Values) && t.mentions(s.Values[i]) || len(s.Values) == 1 && t.mentions(s.Values[0]) {
						if t.add(name) {
							changed = true
						}
					}
				}
			case *ast.RangeStmt:
				if t.mentions(s.X) {
					k, _ := s.Key.(*ast.Ident)
					v, _ := s.Value.(*ast.Ident)
					ck, cv := t.add(k), t.add(v)
					changed = changed || ck || cv
				}
			}
			return true
		})
		if !changed {
			return
		}
	}
}

func (c *checker) isMap(e ast.Expr) bool {
	t := c.pass.TypesInfo.TypeOf(e)
	if t == nil {
		return false
	}
	_, ok := t.Underlying().(*types.Map)
	return ok
}
