package detvet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/codegenie/codegenie/detvet"
)

// analyze writes src as the only file of module example.com/p, runs a on it
// and prints the findings.
func analyze(a *analysis.Analyzer, src string) {
	dir, err := os.MkdirTemp("", "detvet-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	for _, f := range [][2]string{{"go.mod", "module example.com/p\n\ngo 1.26\n"}, {"p.go", src}} {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadSyntax | packages.NeedModule, Dir: dir}, ".")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := checker.Analyze([]*analysis.Analyzer{a}, pkgs, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, act := range g.Roots {
		for _, d := range act.Diagnostics {
			p := act.Package.Fset.Position(d.Pos)
			fmt.Printf("%s:%d: [%s] %s\n", filepath.Base(p.Filename), p.Line, d.Category, d.Message)
		}
	}
}

const exampleSrc = `package p

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

func Stamp() time.Time { return time.Now() }

func Dump(w io.Writer, m map[string]int) {
	for k, v := range m {
		fmt.Fprintf(w, "%s=%d\n", k, v)
	}
}

func DumpSorted(w io.Writer, m map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(w, "%s=%d\n", k, m[k])
	}
}
`

func ExampleNew() {
	a := detvet.New(detvet.Config{Packages: regexp.MustCompile(`^example\.com/p$`)})
	analyze(a, exampleSrc)
	// Output:
	// p.go:11: [wallclock] time.Now reads the wall clock; inject a clock (events.Config.Clock, guard.RecordedClock in replay)
	// p.go:15: [maporder] Fprintf writes to w inside a range over a map, in random order; collect the keys, sort them (slices.Sorted(maps.Keys(m))) and range over them
}

func ExampleConfig() {
	// Also check tests, in every package of a module.
	cfg := detvet.Config{Packages: regexp.MustCompile(`^example\.com/`), Tests: true}
	fmt.Println(detvet.New(cfg).Name)
	// Output: detvet
}

func ExampleAnalyzer() {
	// Analyzer checks every package outside codegenie's own module; -pkgs
	// narrows it.
	a := detvet.New(detvet.Config{})
	if err := a.Flags.Set("pkgs", `^example\.com/other$`); err != nil {
		fmt.Println(err)
	}
	analyze(a, exampleSrc)
	fmt.Println("---")
	analyze(detvet.Analyzer, "package p\n\nimport \"os\"\n\nvar Key = os.Getenv(\"KEY\") //detvet:ignore read once by the command, never on the pipeline path\n\nvar Home = os.Getenv(\"HOME\")\n")
	// Output:
	// ---
	// p.go:7: [env] os.Getenv reads the environment; pass configuration and API keys in explicitly
}

func ExampleConfig_Checks() {
	var cfg detvet.Config // the zero value: every package, but only the pipeline of codegenie itself
	for _, path := range []string{
		"example.com/user/summarise",
		"github.com/codegenie/codegenie/fallback",
		"github.com/codegenie/codegenie/harness",
	} {
		fmt.Println(path, cfg.Checks(path))
	}
	// Output:
	// example.com/user/summarise true
	// github.com/codegenie/codegenie/fallback true
	// github.com/codegenie/codegenie/harness false
}
