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
