package refresh

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/codegenie/codegenie/cassettes"
)

// testPackage is a package of the module whose test binary links package
// cassettes.
type testPackage struct {
	ImportPath string
	Dir        string
	bin        string // its built test binary ("" before build, or when it has no tests)
}

// maxGoList bounds what go list may print.
const maxGoList = 64 << 20

// testPackages lists the packages of r.Packages whose test binaries link
// package cassettes, sorted by import path.
func (r *resolved) testPackages(ctx context.Context) ([]*testPackage, error) {
	args := append([]string{"list", "-e", "-test", "-json=ImportPath,Dir,Deps,Error"}, r.Packages...)
	out, err := r.goCmd(ctx, args...)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var pkgs []*testPackage
	for dec.More() {
		var p struct {
			ImportPath string
			Dir        string
			Deps       []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("refresh: reading go list's output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("refresh: go list %s: %s", p.ImportPath, p.Error.Err)
		}
		ip, ok := strings.CutSuffix(p.ImportPath, ".test")
		if !ok || strings.Contains(ip, " ") {
			continue
		}
		if slices.ContainsFunc(p.Deps, func(d string) bool {
			return d == cassettesPackage || strings.HasPrefix(d, cassettesPackage+" [")
		}) {
			pkgs = append(pkgs, &testPackage{ImportPath: ip, Dir: p.Dir})
		}
	}
	slices.SortFunc(pkgs, func(a, b *testPackage) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return pkgs, nil
}

// goCmd runs the go command in the module root and returns its standard
// output.
func (r *resolved) goCmd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.Go, args...)
	cmd.Dir, cmd.Env = r.root, r.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{w: &stdout, n: maxGoList}, &limited{w: &stderr, n: maxOutput}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("refresh: %s %s: %w\n%s", r.Go, strings.Join(args, " "), err, tail(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// build builds p's test binary into dir, and reports whether p has
// tests.
func (r *resolved) build(ctx context.Context, p *testPackage, dir string) (bool, error) {
	name := fmt.Sprintf("%s.test", strings.NewReplacer("/", "_", ".", "_").Replace(p.ImportPath))
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(dir, name)
	fmt.Fprintf(r.Log, "refresh: building the tests of %s\n", p.ImportPath)
	if _, err := r.goCmd(ctx, "test", "-c", "-o", bin, p.ImportPath); err != nil {
		return false, err
	}
	if _, err := os.Stat(bin); err != nil {
		return false, nil // no test files
	}
	p.bin = bin
	return true, nil
}

// tests lists p's top-level tests, examples and fuzz targets (whose seed
// inputs run as tests) that r.Run selects, in the binary's order.
func (r *resolved) tests(ctx context.Context, p *testPackage) ([]string, error) {
	out, err := r.runBinary(ctx, p, nil, "-test.list", ".")
	if err != nil {
		return nil, fmt.Errorf("refresh: listing the tests of %s: %w", p.ImportPath, err)
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		n := strings.TrimSpace(sc.Text())
		if (strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Example") || strings.HasPrefix(n, "Fuzz")) && !strings.ContainsAny(n, " \t") && r.run.MatchString(n) {
			names = append(names, n)
		}
	}
	return names, nil
}

// errTestFailed: a test binary's run exited with a failure.
var errTestFailed = errors.New("the tests failed")

// runBinary runs p's test binary in p's directory with r.Env and extra
// variables, and returns what it printed. A failing run returns its
// output too, with an error wrapping errTestFailed.
func (r *resolved) runBinary(ctx context.Context, p *testPackage, extra []string, args ...string) (string, error) {
	args = append(args, "-test.timeout="+r.Timeout.String())
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Dir = p.Dir
	cmd.Env = append(slices.Clip(r.Env), extra...)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	w := &limited{w: &out, n: maxOutput}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), nil
	case errors.As(err, &exit):
		return out.String(), fmt.Errorf("%w (%v)", errTestFailed, err)
	}
	return out.String(), err
}

// runPattern is a -test.run pattern selecting exactly the top-level
// tests names.
func runPattern(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

// maxOutput bounds what is kept of a command's output.
const maxOutput = 4 << 20

// limited keeps at most n bytes written to w, dropping the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(b []byte) (int, error) {
	if l.n > 0 {
		k := min(len(b), l.n)
		l.w.Write(b[:k])
		l.n -= k
	}
	return len(b), nil
}

// tailLines is how many lines of a failing command's output are shown.
const tailLines = 40

// tail is the end of a command's output, at most tailLines lines, with
// secrets masked.
func tail(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > tailLines {
		lines = append([]string{fmt.Sprintf("… (%d lines before)", len(lines)-tailLines)}, lines[len(lines)-tailLines:]...)
	}
	return cassettes.Mask(strings.Join(lines, "\n"))
}
