package refresh

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/internal/refreshenv"
)

// Config configures a refresh of a module's cassettes. The zero value
// refreshes every cassette that the tests of the module in the current
// directory open, with the go command on PATH and this process's
// environment, reviewing with review.Config's defaults.
type Config struct {
	// Dir is a directory of the module; "" means the current directory.
	// The refresh works on the module it belongs to, from its root.
	Dir string
	// Packages are the package patterns whose tests are run (as go test
	// takes them, from the module root); nil means "./...". Only the
	// packages whose tests link package cassettes are run.
	Packages []string
	// Run selects tests by their top-level name, as go test -run's first
	// element does; "" runs them all.
	Run string
	// Cassettes select cassettes by their path from the module root
	// (slash-separated), each a path.Match pattern; a pattern without a
	// "/" matches the file's name, and one ending in "/..." everything
	// under a directory. nil selects every cassette found.
	Cassettes []string
	// Expired selects only the cassettes past their maximum age (the
	// manifest's max_age, judged at Now against each one's recorded_at).
	Expired bool
	// Force and Reason replace cassettes a manifest pins (a golden digest
	// depends on them); Reason goes into the manifest history of every
	// cassette applied. Force needs a Reason.
	Force  bool
	Reason string
	// Review configures the review of the re-recorded cassettes.
	Review review.Config
	// Go is the go command; "" means "go" found on PATH.
	Go string
	// Env is the environment of the go command and of the test binaries
	// (where the team's tests read their API keys); nil means this
	// process's.
	Env []string
	// Timeout bounds each test binary's run (its -test.timeout); 0 means
	// 10 minutes, go test's default.
	Timeout time.Duration
	// Log receives a line per step; nil discards them.
	Log io.Writer
	// Now is the clock of recording times and of ages; nil means
	// time.Now.
	Now func() time.Time
}

// defaultTimeout is Config.Timeout's default.
const defaultTimeout = 10 * time.Minute

// defaultReason is the manifest history's reason for an applied
// cassette when Config.Reason is empty.
const defaultReason = "re-recorded by refresh-cassettes"

// cassettesPackage is the import path of package cassettes: a package
// whose test binary links it may open cassettes.
var cassettesPackage = reflect.TypeFor[cassettes.Cassette]().PkgPath()

// resolved is a Config with its defaults filled in and checked.
type resolved struct {
	Config
	root string // the module root, absolute
	run  *regexp.Regexp
}

// errUsage wraps the errors of a Config that cannot work.
var errUsage = errors.New("refresh: invalid configuration")

// resolve resolves c for a refresh of the module Dir is in.
func (c Config) resolve() (*resolved, error) {
	r, err := c.resolveOptions()
	if err != nil {
		return nil, err
	}
	dir := c.Dir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if r.root = refreshenv.ModuleRoot(abs); r.root == "" {
		return nil, fmt.Errorf("%w: %s is in no Go module (no go.mod in it or above it): run the refresh from a module", errUsage, abs)
	}
	return r, nil
}

// resolveOptions resolves every field of c but the module.
func (c Config) resolveOptions() (*resolved, error) {
	r := &resolved{Config: c}
	var err error
	if r.run, err = regexp.Compile(c.Run); err != nil {
		return nil, fmt.Errorf("%w: Run: %v", errUsage, err)
	}
	for _, p := range c.Cassettes {
		if _, err := path.Match(strings.TrimSuffix(p, "/..."), ""); err != nil {
			return nil, fmt.Errorf("%w: cassette pattern %q: %v", errUsage, p, err)
		}
	}
	if c.Force && strings.TrimSpace(c.Reason) == "" {
		return nil, fmt.Errorf("%w: Force needs a Reason: why the pinned cassettes change", errUsage)
	}
	if len(r.Packages) == 0 {
		r.Packages = []string{"./..."}
	}
	for _, p := range r.Packages {
		if strings.HasPrefix(p, "-") || p == "" {
			return nil, fmt.Errorf("%w: package pattern %q: a pattern never starts with '-' (go would read it as a flag)", errUsage, p)
		}
	}
	if r.Go == "" {
		r.Go = "go"
	}
	if r.Env == nil {
		//detvet:ignore the default of Config.Env: the tests a refresh runs read their API keys from it, as under go test; it never reaches an output
		r.Env = os.Environ()
	}
	r.Env = withoutRefreshEnv(r.Env)
	if r.Timeout <= 0 {
		r.Timeout = defaultTimeout
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
	if r.Now == nil {
		//detvet:ignore the default of Config.Now: recording times and ages are the real date by design
		r.Now = time.Now
	}
	if r.Reason == "" {
		r.Reason = defaultReason
	}
	return r, nil
}

// withoutRefreshEnv drops the variables a refresh sets from env, so that
// a refresh run from a test binary sets its own.
func withoutRefreshEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != refreshenv.List && k != refreshenv.Stage {
			out = append(out, kv)
		}
	}
	return out
}

// selects reports whether the patterns select the cassette at rel (slash
// path from the module root).
func (r *resolved) selects(rel string) bool {
	if len(r.Cassettes) == 0 {
		return true
	}
	for _, p := range r.Cassettes {
		switch {
		case strings.HasSuffix(p, "/..."):
			if dir := strings.TrimSuffix(p, "/..."); dir == "" || rel == dir || strings.HasPrefix(rel, dir+"/") {
				return true
			}
			if ok, _ := path.Match(strings.TrimSuffix(p, "/..."), path.Dir(rel)); ok {
				return true
			}
		case !strings.Contains(p, "/"):
			if ok, _ := path.Match(p, path.Base(rel)); ok {
				return true
			}
		default:
			if ok, _ := path.Match(p, rel); ok {
				return true
			}
		}
	}
	return false
}
