package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/singlechecker"
	"golang.org/x/tools/go/packages"

	"github.com/codegenie/codegenie/detvet"
)

func main() {
	if vetProtocol(os.Args[1:]) {
		singlechecker.Main(detvet.Analyzer)
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// vetProtocol reports whether go vet is driving the command: it asks for
// the version (-V=full) and the flags (-flags), then passes a unit.cfg.
func vetProtocol(args []string) bool {
	for _, a := range args {
		if a == "-flags" || a == "--flags" || strings.HasPrefix(a, "-V") || strings.HasPrefix(a, "--V") {
			return true
		}
	}
	return len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg")
}

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitFindings = 3
)

// run is the standalone driver: it loads the packages matched by the
// patterns in args (./... when there are none), runs detvet on those the
// configuration selects, prints the findings to stdout and a one-line
// summary to stderr, and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("detvet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg detvet.Config
	pkgs := fs.String("pkgs", "", "regular expression selecting the import paths of the packages to check (default: every package matched; in codegenie's own module, detvet.DefaultPackages)")
	fs.BoolVar(&cfg.Tests, "tests", false, "also check _test.go files")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: detvet [-pkgs=REGEXP] [-tests] [-json] [packages]\n\n"+
			"detvet finds, at compile time, what makes a Go pipeline nondeterministic:\n"+
			"the wall clock, randomness, map order, the environment, and more.\n"+
			"With no packages, detvet checks ./... of the module in the current\n"+
			"directory. In your module's root:\n\n"+
			"\tgo run github.com/codegenie/codegenie/cmd/detvet ./...\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *pkgs != "" {
		re, err := regexp.Compile(*pkgs)
		if err != nil {
			fmt.Fprintf(stderr, "detvet: -pkgs: %v\n", err)
			return exitUsage
		}
		cfg.Packages = re
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}

	// A pattern that matches nothing would otherwise check nothing and
	// exit 0; go list only warns about it.
	for _, p := range patterns {
		found, err := packages.Load(&packages.Config{Mode: packages.NeedName}, p)
		if err != nil {
			fmt.Fprintf(stderr, "detvet: %v\n", err)
			return exitFailure
		}
		var why string
		ok := slices.ContainsFunc(found, func(p *packages.Package) bool { return len(p.Errors) == 0 })
		if !ok && len(found) > 0 && len(found[0].Errors) > 0 {
			why = " (" + found[0].Errors[0].Msg + ")"
		}
		if !ok {
			fmt.Fprintf(stderr, "detvet: pattern %q matches no package%s; run detvet in your module's directory, or name packages as go build does (./..., ./pkg)\n", p, why)
			return exitFailure
		}
	}

	loaded, err := packages.Load(&packages.Config{Mode: packages.LoadSyntax, Tests: cfg.Tests}, patterns...)
	if err != nil {
		fmt.Fprintf(stderr, "detvet: %v\n", err)
		return exitFailure
	}
	if n := packages.PrintErrors(loaded); n > 0 {
		fmt.Fprintf(stderr, "detvet: %d packages failed to load or type-check\n", n)
		return exitFailure
	}
	checked := map[string]bool{}
	for _, p := range loaded {
		if cfg.Checks(p.PkgPath) && !strings.HasSuffix(p.PkgPath, ".test") {
			checked[strings.TrimSuffix(p.PkgPath, "_test")] = true
		}
	}

	g, err := checker.Analyze([]*analysis.Analyzer{detvet.New(cfg)}, loaded, nil)
	if err != nil {
		fmt.Fprintf(stderr, "detvet: %v\n", err)
		return exitFailure
	}
	findings, err := collect(g)
	if err != nil {
		fmt.Fprintf(stderr, "detvet: %v\n", err)
		return exitFailure
	}
	if *asJSON {
		if err := g.PrintJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "detvet: %v\n", err)
			return exitFailure
		}
	} else {
		for _, f := range findings {
			fmt.Fprintln(stdout, f)
		}
	}
	summary := fmt.Sprintf("detvet: checked %d %s", len(checked), plural(len(checked), "package", "packages"))
	if skipped := countPaths(loaded) - len(checked); skipped > 0 {
		summary += fmt.Sprintf(" (%d more matched but are not selected; -pkgs=. checks them)", skipped)
	}
	fmt.Fprintf(stderr, "%s: %d %s\n", summary, len(findings), plural(len(findings), "finding", "findings"))
	if len(findings) > 0 {
		return exitFindings
	}
	return exitOK
}

// collect returns the findings of the root actions as
// "file:line:col: message" lines, the file relative to the working
// directory when it is below it, deduplicated (a file can belong to a
// package and its test variant) and sorted by position.
func collect(g *checker.Graph) ([]string, error) {
	//detvet:ignore findings name files relative to the directory detvet runs in, as go vet does
	wd, _ := os.Getwd()
	type finding struct {
		file      string
		line, col int
		msg       string
	}
	seen := map[finding]bool{}
	var all []finding
	for _, act := range g.Roots {
		if act.Err != nil {
			return nil, fmt.Errorf("%s: %w", act.Package.PkgPath, act.Err)
		}
		for _, d := range act.Diagnostics {
			p := act.Package.Fset.Position(d.Pos)
			file := p.Filename
			if rel, err := filepath.Rel(wd, file); err == nil && wd != "" && !strings.HasPrefix(rel, "..") {
				file = rel
			}
			f := finding{file, p.Line, p.Column, d.Message}
			if !seen[f] {
				seen[f] = true
				all = append(all, f)
			}
		}
	}
	slices.SortFunc(all, func(a, b finding) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col), cmp.Compare(a.msg, b.msg))
	})
	out := make([]string, len(all))
	for i, f := range all {
		out[i] = fmt.Sprintf("%s:%d:%d: %s", f.file, f.line, f.col, f.msg)
	}
	return out, nil
}

// countPaths counts the distinct import paths of pkgs, a test variant
// counted with its package and a generated test main not at all.
func countPaths(pkgs []*packages.Package) int {
	paths := map[string]bool{}
	for _, p := range pkgs {
		if !strings.HasSuffix(p.PkgPath, ".test") { // a generated test main
			paths[strings.TrimSuffix(p.PkgPath, "_test")] = true
		}
	}
	return len(paths)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
