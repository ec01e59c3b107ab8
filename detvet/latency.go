package detvet

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// This file decides whether a branch on elapsed time decides an output
// (the latency rule).

// isThreshold reports whether cond compares against a threshold: an
// ordered comparison, or time.Time's After, Before or Compare.
func isThreshold(cond ssa.Value) bool {
	switch x := cond.(type) {
	case *ssa.BinOp:
		switch x.Op {
		case token.LSS, token.GTR, token.LEQ, token.GEQ:
			return true
		}
	case *ssa.Call:
		if callee := x.Call.StaticCallee(); callee != nil {
			if fo, ok := callee.Object().(*types.Func); ok {
				switch funcKey(fo) {
				case "(time.Time).After", "(time.Time).Before":
					return true
				}
			}
		}
	}
	return false
}

// blocks reports whether fn waits in a way that lets a synctest bubble's
// clock advance: it sleeps, waits on a timer or ticker, receives or
// selects. Elapsed time then moves in the gate as well, and a branch on it
// is exercised there.
func blocks(fn *ssa.Function) bool {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch in := instr.(type) {
			case *ssa.Select:
				return true
			case *ssa.UnOp:
				if in.Op == token.ARROW {
					return true
				}
			case *ssa.Call:
				if callee := in.Call.StaticCallee(); callee != nil {
					if fo, ok := callee.Object().(*types.Func); ok {
						switch funcKey(fo) {
						case "time.Sleep", "time.After", "time.Tick", "time.NewTimer", "time.NewTicker", "time.AfterFunc":
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// branchMatters reports whether what the branch in decides can reach an
// output: a value defined on one side only, or merged from the two sides,
// reaches one, or one side has an effect the other has not.
func (f *flow) branchMatters(fn *ssa.Function, in *ssa.If) bool {
	b := in.Block()
	if len(b.Succs) != 2 {
		return false
	}
	reach := func(s *ssa.BasicBlock) map[*ssa.BasicBlock]bool {
		seen := map[*ssa.BasicBlock]bool{b: true}
		stack := []*ssa.BasicBlock{s}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[x] {
				continue
			}
			seen[x] = true
			stack = append(stack, x.Succs...)
		}
		delete(seen, b)
		return seen
	}
	r0, r1 := reach(b.Succs[0]), reach(b.Succs[1])
	region := map[*ssa.BasicBlock]bool{}
	for x := range r0 {
		if !r1[x] {
			region[x] = true
		}
	}
	for x := range r1 {
		if !r0[x] {
			region[x] = true
		}
	}
	var seeds []ssa.Value
	for _, x := range fn.Blocks {
		switch {
		case region[x]:
			for _, instr := range x.Instrs {
				if v, ok := instr.(ssa.Value); ok {
					seeds = append(seeds, v)
				}
				if effect(instr) {
					return true
				}
				if ret, ok := instr.(*ssa.Return); ok && len(ret.Results) > 0 && f.returnsOut(fn) {
					return true
				}
			}
		case r0[x] && r1[x]:
			for _, instr := range x.Instrs {
				phi, ok := instr.(*ssa.Phi)
				if !ok {
					continue
				}
				for _, p := range x.Preds {
					if region[p] || p == b {
						seeds = append(seeds, phi)
						break
					}
				}
			}
		}
	}
	return len(seeds) > 0 && f.reach(fn, seeds...)
}

// effect reports whether instr acts on the world by itself: a send, or a
// call that is neither a logger nor a standard-library function of plain
// values.
func effect(instr ssa.Instruction) bool {
	var c *ssa.CallCommon
	switch in := instr.(type) {
	case *ssa.Send:
		return true
	case *ssa.Call:
		c = in.Common()
	case *ssa.Go:
		c = in.Common()
	case *ssa.Defer:
		c = in.Common()
	default:
		return false
	}
	if isLogger(c) {
		return false
	}
	if _, ok := c.Value.(*ssa.Builtin); ok {
		return false
	}
	callee := c.StaticCallee()
	if callee == nil {
		return true
	}
	fo, _ := callee.Object().(*types.Func)
	if fo == nil || fo.Pkg() == nil || !stdlib(fo.Pkg().Path()) {
		return true
	}
	return sinkFuncs[fo.Pkg().Path()+"."+fo.Name()]
}
