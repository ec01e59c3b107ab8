package hint

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/modfile"
)

// Module is codegenie's module path.
const Module = "github.com/codegenie/codegenie"

// Tool returns the command line that runs codegenie's command cmd/name
// with args (each quoted for a shell) from the caller's module root.
func Tool(name string, args ...string) string {
	return Join(toolArgv(name, args...))
}

// ToolCommand is Tool as a Command that runs in the module root above the
// working directory.
func ToolCommand(purpose, name string, args ...string) Command {
	return Command{Purpose: purpose, Argv: toolArgv(name, args...), Dir: ModuleRoot()}
}

func toolArgv(name string, args ...string) []string {
	info, _ := debug.ReadBuildInfo()
	if info != nil && info.Main.Path != Module && len(info.Deps) == 0 {
		// A go test binary records no dependencies: the go.mod of the
		// module under test says how it resolves Module.
		if d := goModDep(); d != nil {
			info.Deps = []*debug.Module{d}
		}
	}
	return toolFor(info, name, args...)
}

// goModDep returns Module as the go.mod above the working directory
// requires (and maybe replaces) it, or nil when it does not.
func goModDep() *debug.Module {
	//detvet:ignore the hint names the go.mod above the working directory
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	root, err := RootOf(wd)
	if err != nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil
	}
	var d *debug.Module
	for _, r := range f.Require {
		if r.Mod.Path == Module {
			d = &debug.Module{Path: Module, Version: r.Mod.Version}
		}
	}
	for _, r := range f.Replace {
		if d != nil && r.Old.Path == Module {
			d.Replace = &debug.Module{Path: r.New.Path, Version: r.New.Version}
		}
	}
	return d
}

func toolFor(info *debug.BuildInfo, name string, args ...string) []string {
	pkg := Module + "/cmd/" + name
	switch v := moduleVersion(info); v {
	case "":
		// Inside this module, or replaced: go.mod resolves the path.
	case "(devel)":
		pkg += "@latest"
	default:
		pkg += "@" + v
	}
	return append([]string{"go", "run", pkg}, args...)
}

// moduleVersion returns "" when the go command resolves Module from the
// caller's go.mod (Module is the main module, or a dependency replaced by
// another directory or version), the required version otherwise, and
// "(devel)" when the build has no usable version.
func moduleVersion(info *debug.BuildInfo) string {
	if info == nil {
		return "(devel)"
	}
	if info.Main.Path == Module {
		return ""
	}
	for _, d := range info.Deps {
		if d.Path != Module {
			continue
		}
		if d.Replace != nil {
			return ""
		}
		if d.Version == "" || d.Version == "(devel)" {
			return "(devel)"
		}
		return d.Version
	}
	return "(devel)"
}

// GoTest returns the command that reruns the test or benchmark named name
// (testing.TB.Name()) of the package in the working directory, from its
// module root (see GoTestCommand), as a shell line.
func GoTest(name string, bench bool, flags ...string) string {
	return GoTestCommand("", name, bench, flags...).String()
}

// RunPattern is the -run (or -bench) pattern that selects exactly the
// test named name (testing.TB.Name()): each element of the name,
// anchored and quoted, joined by "/".
func RunPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// GoTestCommand returns the command that reruns the test or benchmark
// named name (testing.TB.Name()) of the package in the working directory:
// in its module root, go test, the package, an anchored -run (or -bench)
// pattern, -count=1, then flags as given (see goTestArgv).
func GoTestCommand(purpose, name string, bench bool, flags ...string) Command {
	pkg, root := ".", ""
	//detvet:ignore the printed command names the package in the working directory, as go test does
	if wd, err := os.Getwd(); err == nil {
		if r, err := RootOf(wd); err == nil {
			if rel, err := filepath.Rel(r, wd); err == nil {
				root = r
				if rel != "." {
					pkg = "./" + filepath.ToSlash(rel)
				}
			}
		}
	}
	c := GoTestOf(purpose, pkg, name, bench, flags...)
	c.Dir = root
	return c
}

// IsBenchmark reports whether the test named name (testing.TB.Name()) is
// a benchmark: go test runs a function as one by its name.
func IsBenchmark(name string) bool { return strings.HasPrefix(name, "Benchmark") }

// GoTestOf is GoTestCommand for the package in directory pkg relative to
// the module root (slashes; "." for the root), run in the module root
// (Dir ""): go test, the package ("./" before a directory below the
// root), an anchored -run (or -bench) pattern, -count=1, then flags.
func GoTestOf(purpose, pkg, name string, bench bool, flags ...string) Command {
	kind := "-run"
	if bench {
		kind = "-bench"
	}
	if pkg != "." && !strings.HasPrefix(pkg, "./") {
		pkg = "./" + pkg
	}
	return Command{Purpose: purpose, Argv: goTestArgv(pkg, kind, name, flags)}
}

// ModuleRoot returns the module root above the working directory, ""
// when there is none.
func ModuleRoot() string {
	//detvet:ignore the module root is found from the working directory
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	r, err := RootOf(wd)
	if err != nil {
		return ""
	}
	return r
}

// RootOf returns the directory of the go.mod at or above dir.
func RootOf(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("no go.mod above " + dir)
		}
		d = up
	}
}
