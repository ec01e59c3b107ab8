package detvet

import (
	"flag"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// DefaultPackages is the import-path pattern of codegenie's own pipeline
// packages: its events, rag, prompt, llm and fallback packages and
// everything below them. When Config.Packages is nil, detvet checks these
// in codegenie's module (its other packages are the gate's own machinery,
// which reads clocks and the environment on purpose) and every package of
// any other module.
const DefaultPackages = `^github\.com/codegenie/codegenie/(events|rag|prompt|llm|fallback)(/|$)`

// codegenieModule is the module DefaultPackages narrows.
const codegenieModule = "github.com/codegenie/codegenie"

// The categories of diagnostics (analysis.Diagnostic.Category), one per
// kind of finding; the package documentation lists them.
const (
	catWallClock = "wallclock"
	catRand      = "rand"
	catCrypto    = "cryptorand"
	catUUID      = "uuid"
	catEnv       = "env"
	catMapOrder  = "maporder"
	catSelect    = "select"
	catGoAppend  = "goappend"
	catIgnore    = "ignore"
	catProcess   = "process"
	catMapHash   = "maphash"
	catZone      = "timezone"
	catUmask     = "umask"
	catGob       = "gob"
	catSort      = "unstablesort"
	catLatency   = "latency"
)

// Config configures an analyzer made by New. The zero value checks the
// non-test files of the packages matching DefaultPackages.
type Config struct {
	// Packages selects, by import path, the packages to check; other
	// packages are skipped. Nil means every package, except that in
	// codegenie's own module only those matching DefaultPackages are
	// checked. The "_test" suffix of an external test package is removed
	// before matching.
	Packages *regexp.Regexp
	// Tests also checks _test.go files. Tests may use the wall clock and
	// randomness freely, so they are skipped by default.
	Tests bool
}

// Checks reports whether c selects the package with the given import
// path.
func (c Config) Checks(path string) bool {
	path = strings.TrimSuffix(path, "_test")
	if c.Packages != nil {
		return c.Packages.MatchString(path)
	}
	if path == codegenieModule || strings.HasPrefix(path, codegenieModule+"/") {
		return defaultPackages.MatchString(path)
	}
	return true
}

var defaultPackages = regexp.MustCompile(DefaultPackages)

// Analyzer is detvet with the zero Config. Its flags are -pkgs (a regular
// expression replacing DefaultPackages) and -tests.
var Analyzer = New(Config{})

const doc = `detvet reports sources of nondeterminism that can reach an output

detvet flags, inside the packages selected by -pkgs, values that can reach
a result, the caller's memory, a package-level variable, another package's
API, a file or a request (not a logger): reads of the wall clock and
branches on elapsed time; the global functions of math/rand and
math/rand/v2; crypto/rand; UUID generation; the environment and user
directories; process state (goroutine count and ids, executable, pid,
hostname, working and temp directories); maphash; gob encodings of maps;
the local time zone; file modes read back under the umask; map iteration
order (range, maps iterators, sync.Map.Range, reflect MapKeys); unstable
sorts whose comparator can tie; select statements whose cases can be ready
together; and goroutines appending to a shared slice. Suppress a finding
with "//detvet:ignore <reason>" on its line or the line above; the reason
is required.`

// New returns a detvet analyzer using cfg. Its -pkgs and -tests flags
// override cfg.
func New(cfg Config) *analysis.Analyzer {
	c := &cfg
	a := &analysis.Analyzer{
		Name:     "detvet",
		Doc:      doc,
		URL:      "https://pkg.go.dev/github.com/codegenie/codegenie/detvet",
		Requires: []*analysis.Analyzer{inspect.Analyzer},
		Run:      func(pass *analysis.Pass) (any, error) { return run(c, pass) },
	}
	a.Flags.Init("detvet", flag.ContinueOnError)
	a.Flags.Var(regexpFlag{&c.Packages}, "pkgs", "regular expression selecting the import paths of the packages to check (default: every package; in codegenie's module, DefaultPackages)")
	a.Flags.BoolVar(&c.Tests, "tests", c.Tests, "also check _test.go files")
	return a
}

type regexpFlag struct{ re **regexp.Regexp }

func (f regexpFlag) String() string {
	if f.re == nil || *f.re == nil {
		return ""
	}
	return (*f.re).String()
}

func (f regexpFlag) Set(s string) error {
	re, err := regexp.Compile(s)
	if err != nil {
		return err
	}
	*f.re = re
	return nil
}

// checker holds the state of one pass.
type checker struct {
	pass     *analysis.Pass
	flow     *flow
	skip     map[*token.File]bool
	idents   map[lineKey][]*ast.Ident // identifiers by line, to place findings
	ignores  map[lineKey]string       // line of a //detvet:ignore -> reason
	reported map[reportKey]bool
}

type reportKey struct {
	pos      token.Pos
	category string
}

type lineKey struct {
	file string
	line int
}

func run(cfg *Config, pass *analysis.Pass) (any, error) {
	if !cfg.Checks(pass.Pkg.Path()) {
		return nil, nil
	}
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	c := &checker{pass: pass, ignores: map[lineKey]string{}, reported: map[reportKey]bool{}, idents: map[lineKey][]*ast.Ident{}}

	skip := map[*token.File]bool{}
	c.skip = skip
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.FileStart)
		if tf == nil {
			continue
		}
		if (!cfg.Tests && strings.HasSuffix(tf.Name(), "_test.go")) || ast.IsGenerated(f) {
			skip[tf] = true
			continue
		}
		c.collectIgnores(f)
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && pass.TypesInfo.Uses[id] != nil {
				p := pass.Fset.Position(id.Pos())
				k := lineKey{p.Filename, p.Line}
				c.idents[k] = append(c.idents[k], id)
			}
			return true
		})
	}
	c.flow = buildFlow(pass)
	c.checkSources()

	root := ins.Root()
	for cur := range root.Preorder((*ast.File)(nil)) {
		if skip[pass.Fset.File(cur.Node().Pos())] {
			continue
		}
		c.checkFile(cur)
	}
	return nil, nil
}

const directive = "//detvet:ignore"

func (c *checker) collectIgnores(f *ast.File) {
	for _, g := range f.Comments {
		for _, cm := range g.List {
			if !strings.HasPrefix(cm.Text, directive) {
				continue
			}
			rest := cm.Text[len(directive):]
			if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
				continue // some other directive, e.g. //detvet:ignored
			}
			reason := strings.TrimSpace(rest)
			if reason == "" {
				c.pass.Report(analysis.Diagnostic{
					Pos: cm.Pos(), End: cm.End(), Category: catIgnore,
					Message: "//detvet:ignore needs a reason: write //detvet:ignore <why this is deterministic>; a bare directive suppresses nothing",
				})
				continue
			}
			p := c.pass.Fset.Position(cm.Pos())
			c.ignores[lineKey{p.Filename, p.Line}] = reason
		}
	}
}

// report reports a finding at n unless a //detvet:ignore with a reason is on
// its line or the line above, or the same position was reported already.
func (c *checker) report(n ast.Node, category, format string, args ...any) {
	pos := n.Pos()
	k := reportKey{pos, category}
	if c.reported[k] {
		return
	}
	c.reported[k] = true
	p := c.pass.Fset.Position(pos)
	if _, ok := c.ignores[lineKey{p.Filename, p.Line}]; ok {
		return
	}
	if _, ok := c.ignores[lineKey{p.Filename, p.Line - 1}]; ok {
		return
	}
	c.pass.Report(analysis.Diagnostic{Pos: pos, End: n.End(), Category: category, Message: sprintf(format, args...)})
}

func (c *checker) checkFile(file inspector.Cursor) {
	for cur := range file.Preorder((*ast.RangeStmt)(nil), (*ast.SelectStmt)(nil),
		(*ast.GoStmt)(nil), (*ast.CallExpr)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.RangeStmt:
			c.checkMapRange(cur, n)
		case *ast.SelectStmt:
			c.checkSelect(cur, n)
		case *ast.GoStmt:
			c.checkGo(cur, n)
		case *ast.CallExpr:
			c.checkCollect(cur, n)
			c.checkSyncMapRange(cur, n)
			c.checkSort(cur, n)
			c.checkGoMethod(cur, n)
		}
	}
}

// skipPos reports whether pos is in a file that is not checked.
func (c *checker) skipPos(pos token.Pos) bool {
	f := c.pass.Fset.File(pos)
	return f != nil && c.skip[f]
}

// objOf returns the object an identifier denotes or defines.
func (c *checker) objOf(id *ast.Ident) types.Object {
	if o := c.pass.TypesInfo.Uses[id]; o != nil {
		return o
	}
	return c.pass.TypesInfo.Defs[id]
}
