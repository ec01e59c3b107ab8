package detvet

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// This file says where a call passes a followed value: into its result,
// into memory it writes, or out of the package (an output); and which
// calls only log.

// isReader reports whether t is io.Reader.
func isReader(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "io" && n.Obj().Name() == "Reader"
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
	var fn *types.Func
	switch {
	case c.IsInvoke():
		fn = c.Method
	case callee != nil:
		fn, _ = callee.Object().(*types.Func)
	}
	if fn == nil {
		addRes()
		w.output = true // a function value: a callback, a hook, yield
		return
	}
	path := ""
	if fn.Pkg() != nil {
		path = fn.Pkg().Path()
	}
	if waits[funcKey(fn)] {
		return // a deadline or a wait: it decides when, not what
	}
	addRes()
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
	case len(args) > 1 && args[0] != v && (isWriter(args[0].Type()) || path == "maps" && (fn.Name() == "Copy" || fn.Name() == "Insert")):
		w.mark(args[0]) // fmt.Fprintf(w, ...), io.Copy(dst, src), maps.Copy(dst, src)
	case len(args) > 1 && args[1] != v && unmarshals(path, fn.Name()):
		w.mark(args[1])
	}
}

// waits are calls that take a time or a duration only to decide when
// something happens: their results do not carry the value.
var waits = map[string]bool{
	"context.WithTimeout": true, "context.WithDeadline": true,
	"context.WithTimeoutCause": true, "context.WithDeadlineCause": true,
	"time.Sleep": true, "time.After": true, "time.Tick": true, "time.NewTimer": true,
	"time.NewTicker": true, "time.AfterFunc": true,
	"(*time.Timer).Reset": true, "(*time.Ticker).Reset": true,
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

// telemetry are the import paths, and prefixes of import paths ending in
// "/", of packages whose functions and methods only log, trace or count:
// what they are given is not the pipeline's output.
var telemetry = []string{
	"log", "log/slog", "expvar", "runtime/trace", "runtime/pprof",
	"go.uber.org/zap", "go.uber.org/zap/", "github.com/sirupsen/logrus", "github.com/rs/zerolog",
	"github.com/rs/zerolog/", "github.com/go-logr/", "go.opentelemetry.io/", "github.com/prometheus/",
}

// isTelemetry reports whether the package at path logs, traces or counts.
func isTelemetry(path string) bool {
	for _, t := range telemetry {
		if path == t || strings.HasSuffix(t, "/") && strings.HasPrefix(path, t) {
			return true
		}
	}
	return false
}

// isWriter reports whether values of t are io.Writers.
func isWriter(t types.Type) bool {
	if writerIface == nil {
		return false
	}
	return types.Implements(t, writerIface) || types.Implements(types.NewPointer(t), writerIface) && !types.IsInterface(t)
}

// writerIface is io.Writer's method set, built without importing io's
// type information.
var writerIface = func() *types.Interface {
	byteSlice := types.NewSlice(types.Typ[types.Byte])
	params := types.NewTuple(types.NewVar(0, nil, "p", byteSlice))
	results := types.NewTuple(types.NewVar(0, nil, "n", types.Typ[types.Int]), types.NewVar(0, nil, "err", types.Universe.Lookup("error").Type()))
	sig := types.NewSignatureType(nil, nil, nil, params, results, false)
	it := types.NewInterfaceType([]*types.Func{types.NewFunc(0, nil, "Write", sig)}, nil)
	it.Complete()
	return it
}()

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
	if isTelemetry(path) {
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
