package detvet

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// occurrence is one use of a source of nondeterminism in the SSA form.
type occurrence struct {
	fn    *ssa.Function
	obj   types.Object // the function, method or variable used
	pos   token.Pos
	r     rule
	seeds []ssa.Value // values that carry it
	marks []ssa.Value // memory it is written into
	// via, when set, is the instruction that uses a source that is not
	// itself a value (a function value, a global read directly).
	via   ssa.Instruction
	viaOf ssa.Value
	// callback, when set, is a function the source calls with
	// nondeterministic arguments (the swap of rand.Shuffle).
	callback ssa.Value
}

// checkSources finds every use of a source in the package's functions and
// reports those whose value can reach an output, and the branches on
// elapsed time that decide what reaches one.
func (c *checker) checkSources() {
	f := c.flow
	latency := map[*ssa.If]bool{}
	for _, fn := range f.funcs {
		creates := createsFiles(fn)
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				for _, o := range c.occurrences(fn, instr, creates) {
					if c.skipPos(o.pos) {
						continue
					}
					w := f.walkOcc(o)
					if w.output || w.returns && f.returnsOut(fn) {
						c.reportAt(o.pos, o.obj, o.r.category, "%s %s", objName(o.obj), o.r.why)
					}
					if o.r.category == catWallClock {
						for _, in := range w.ifs {
							if !latency[in] && isThreshold(in.Cond) && !blocks(in.Parent()) && f.branchMatters(fn, in) {
								latency[in] = true
								c.reportAt(in.Cond.Pos(), nil, catLatency, "branch on elapsed time decides what reaches the output: which side it takes depends on how long the work before it took (the machine, its load, a response's latency), not on the inputs; bound the work by a count, or by a context deadline checked at blocking calls, or inject the clock")
							}
						}
					}
				}
			}
		}
	}
}

// walkOcc follows one occurrence.
func (f *flow) walkOcc(o occurrence) *walker {
	w := &walker{f: f, fn: o.fn, seen: map[ssa.Value]bool{}}
	for _, s := range o.seeds {
		w.add(s)
	}
	for _, m := range o.marks {
		w.mark(m)
	}
	if o.via != nil {
		w.visit(o.viaOf, o.via)
	}
	if o.callback != nil {
		fn := o.callback
		if mc, ok := fn.(*ssa.MakeClosure); ok {
			fn = mc.Fn
		}
		cb, ok := fn.(*ssa.Function)
		if !ok || len(cb.Blocks) == 0 {
			w.output = true
		} else {
			for i := range cb.Params {
				if f.summarize(cb, i, false).output {
					w.output = true
				}
			}
		}
	}
	return w.run()
}

// occurrences returns the sources instr uses.
func (c *checker) occurrences(fn *ssa.Function, instr ssa.Instruction, creates bool) []occurrence {
	var out []occurrence
	if call, ok := instr.(*ssa.Call); ok {
		if o, ok := c.callOccurrence(fn, call, creates); ok {
			out = append(out, o)
		}
	}
	var ops [8]*ssa.Value
	for i, op := range instr.Operands(ops[:0]) {
		switch v := (*op).(type) {
		case *ssa.Function:
			if call, ok := instr.(*ssa.Call); ok && i == 0 && !call.Call.IsInvoke() {
				continue // a call, handled above
			}
			fo, _ := v.Object().(*types.Func)
			if r, ok := funcRule(fo); ok && v.Signature.Recv() == nil {
				out = append(out, occurrence{fn: fn, obj: fo, pos: posOf(instrValue(instr), fn, instr), r: r, via: instr, viaOf: v})
			}
		case *ssa.Global:
			gv, _ := v.Object().(*types.Var)
			if gv == nil {
				continue
			}
			if r, ok := globalRule(gv); ok {
				o := occurrence{fn: fn, obj: gv, pos: posOf(instrValue(instr), fn, instr), r: r}
				if u, ok := instr.(*ssa.UnOp); ok && u.Op == token.MUL {
					o.seeds = []ssa.Value{u}
				} else {
					o.via, o.viaOf = instr, v
				}
				out = append(out, o)
			}
		}
	}
	return out
}

// callOccurrence returns the source a call is, if any.
func (c *checker) callOccurrence(fn *ssa.Function, call *ssa.Call, creates bool) (occurrence, bool) {
	cc := call.Common()
	var obj *types.Func
	if cc.IsInvoke() {
		obj = cc.Method
	} else if callee := cc.StaticCallee(); callee != nil {
		obj, _ = callee.Object().(*types.Func)
	}
	if obj == nil {
		return occurrence{}, false
	}
	o := occurrence{fn: fn, obj: obj, pos: call.Pos(), seeds: []ssa.Value{call}}
	key := funcKey(obj)
	if r, ok := funcRule(obj); ok {
		o.r = r
		if (key == "math/rand.Shuffle" || key == "math/rand/v2.Shuffle") && len(cc.Args) == 2 {
			o.callback = cc.Args[1]
		}
		if fills[key] && len(cc.Args) > 0 {
			o.marks = []ssa.Value{cc.Args[0]}
		}
		if r.category == catMapOrder && sortedLater(call) {
			return o, false
		}
		return o, true
	}
	switch {
	case key == "(*encoding/gob.Encoder).Encode" && len(cc.Args) == 2 && hasMap(dynType(cc.Args[1]), nil):
		o.r = rule{catGob, "encodes a map, whose entries gob writes in random order; encode a sorted slice of entries instead"}
		o.marks, o.seeds = []ssa.Value{cc.Args[0]}, []ssa.Value{cc.Args[1]}
		return o, true
	case zoneMethods[key] && len(cc.Args) > 0 && localTime(cc.Args[0]):
		o.r = rule{catZone, "formats a time in the process's local zone (time.Unix and friends return local times); call .UTC() first, or use an explicit *time.Location"}
		return o, true
	case creates && cc.IsInvoke() && obj.Name() == "Mode" && obj.Pkg() != nil && obj.Pkg().Path() == "io/fs":
		o.r = rule{catUmask, "reads back the mode of a file this code creates, which the process umask decides; write the mode you mean (os.Chmod after creating) or leave it out of the output"}
		return o, true
	}
	return occurrence{}, false
}

// zoneMethods are the methods of time.Time whose result depends on the
// time's location.
var zoneMethods = map[string]bool{}

func init() {
	for _, m := range []string{"Format", "AppendFormat", "String", "Date", "Clock", "Year", "Month", "Day",
		"Hour", "Minute", "YearDay", "Weekday", "ISOWeek", "Zone", "ZoneBounds", "Location",
		"MarshalJSON", "MarshalText", "AppendText", "GoString"} {
		zoneMethods["(time.Time)."+m] = true
	}
}

// localTime reports whether v is a time made by time.Unix, UnixMilli or
// UnixMicro, which are in the local zone.
func localTime(v ssa.Value) bool {
	seen := map[ssa.Value]bool{}
	var rec func(v ssa.Value) bool
	rec = func(v ssa.Value) bool {
		if seen[v] {
			return false
		}
		seen[v] = true
		switch x := v.(type) {
		case *ssa.Phi:
			for _, e := range x.Edges {
				if rec(e) {
					return true
				}
			}
		case *ssa.Call:
			if callee := x.Call.StaticCallee(); callee != nil {
				if fo, ok := callee.Object().(*types.Func); ok {
					switch funcKey(fo) {
					case "time.Unix", "time.UnixMilli", "time.UnixMicro":
						return true
					}
				}
			}
		}
		return false
	}
	return rec(v)
}

// createsFiles reports whether fn, or a function it is nested in, creates
// files or directories (whose modes the umask decides).
func createsFiles(fn *ssa.Function) bool {
	for ; fn != nil; fn = fn.Parent() {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				call, ok := instr.(*ssa.Call)
				if !ok {
					continue
				}
				if callee := call.Call.StaticCallee(); callee != nil {
					if fo, ok := callee.Object().(*types.Func); ok {
						switch funcKey(fo) {
						case "os.Create", "os.WriteFile", "os.OpenFile", "os.Mkdir", "os.MkdirAll", "os.CreateTemp", "os.MkdirTemp":
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// sortedLater reports whether the slice v returns is sorted by a call of
// sort or slices, following it through local variables.
func sortedLater(v ssa.Value) bool {
	seen := map[ssa.Value]bool{}
	queue := []ssa.Value{v}
	for len(queue) > 0 && len(seen) < 64 {
		x := queue[0]
		queue = queue[1:]
		if seen[x] || x.Referrers() == nil {
			continue
		}
		seen[x] = true
		for _, r := range *x.Referrers() {
			switch r := r.(type) {
			case *ssa.Store:
				if r.Val == x {
					queue = append(queue, r.Addr)
				}
			case *ssa.UnOp, *ssa.MakeInterface, *ssa.Phi, *ssa.ChangeType:
				queue = append(queue, r.(ssa.Value))
			case *ssa.MakeClosure:
				for i, b := range r.Bindings {
					if b == x {
						queue = append(queue, r.Fn.(*ssa.Function).FreeVars[i])
					}
				}
			case *ssa.Call:
				if callee := r.Call.StaticCallee(); callee != nil {
					if fo, ok := callee.Object().(*types.Func); ok && fo.Pkg() != nil {
						if p := fo.Pkg().Path(); p == "sort" || p == "slices" && strings.HasPrefix(fo.Name(), "Sort") {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// dynType returns the type of the value an interface conversion wraps.
func dynType(v ssa.Value) types.Type {
	if mi, ok := v.(*ssa.MakeInterface); ok {
		return mi.X.Type()
	}
	return v.Type()
}

// hasMap reports whether values of t hold a map.
func hasMap(t types.Type, seen map[types.Type]bool) bool {
	if seen == nil {
		seen = map[types.Type]bool{}
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Map:
		return true
	case *types.Pointer:
		return hasMap(u.Elem(), seen)
	case *types.Slice:
		return hasMap(u.Elem(), seen)
	case *types.Array:
		return hasMap(u.Elem(), seen)
	case *types.Struct:
		for i := range u.NumFields() {
			if u.Field(i).Exported() && hasMap(u.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// instrValue returns instr as a value, if it is one.
func instrValue(instr ssa.Instruction) ssa.Value {
	v, _ := instr.(ssa.Value)
	return v
}

// objName names a source in a finding.
func objName(o types.Object) string {
	if fn, ok := o.(*types.Func); ok && fn.Signature().Recv() != nil {
		k := funcKey(fn)
		return k
	}
	return o.Pkg().Path() + "." + o.Name()
}

// reportAt reports a finding at the identifier of obj on the line of pos,
// or at pos when there is none.
func (c *checker) reportAt(pos token.Pos, obj types.Object, category, format string, args ...any) {
	var node ast.Node = posNode(pos)
	if obj != nil {
		p := c.pass.Fset.Position(pos)
		for _, id := range c.idents[lineKey{p.Filename, p.Line}] {
			if c.pass.TypesInfo.Uses[id] == obj {
				node = id
				break
			}
		}
	}
	c.report(node, category, format, args...)
}

// posNode is a node of zero width at a position.
type posNode token.Pos

func (p posNode) Pos() token.Pos { return token.Pos(p) }
func (p posNode) End() token.Pos { return token.Pos(p) }
