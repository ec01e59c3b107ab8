package childproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codegenie/codegenie/internal/hint"
)

// command builds the command of child c under base (its Env without the
// spec, which specEnv adds) and its spec.
func (r *Runner) command(ctx context.Context, base string, c Child) (*exec.Cmd, *Spec, error) {
	p := c.Plan
	spec := &Spec{
		Format: specFormat, Test: r.test, Scenario: r.scenario, Run: c.Run, Procs: c.Procs,
		Out: filepath.Join(base, "report.json"), Nonce: nonce(), Hostname: p.hostname, Domain: p.domain, UTS: utsNamespace(),
	}
	args := []string{"-test.run=" + hint.RunPattern(r.test), "-test.count=1", fmt.Sprintf("-test.timeout=%v", 2*r.timeout+time.Minute)}
	if c.Discover {
		args = append(args, "-test.testlogfile="+filepath.Join(base, "testlog.txt"))
	}
	if f := flag.Lookup("test.short"); f != nil && f.Value.String() == "true" {
		// The test takes the same branches as in the test process.
		args = append(args, "-test.short")
	}
	exe := r.exe
	if p.exe {
		var err error
		if exe, err = linkExecutable(base, r.exe); err != nil {
			return nil, nil, err
		}
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = r.wd
	if p.dir {
		d, err := linkedDir(base, r.root, r.wd)
		if err != nil {
			return nil, nil, err
		}
		cmd.Dir = d
	}
	env := childEnviron(c.Procs)
	if p.tmp {
		tmp := filepath.Join(base, "tmp")
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return nil, nil, err
		}
		env = append(env, "TMPDIR="+tmp)
	} else if v, ok := os.LookupEnv("TMPDIR"); ok { //detvet:ignore a child keeps the test process's TMPDIR unless the plan varies it
		env = append(env, "TMPDIR="+v)
	}
	env = appendLocale(env, p)
	if p.home {
		h, err := freshHome(base)
		if err != nil {
			return nil, nil, err
		}
		env = append(env, h...)
	}
	if p.path {
		v, err := extraPath(base)
		if err != nil {
			return nil, nil, err
		}
		env = append(env, v)
	}
	for _, k := range slices.Sorted(maps.Keys(p.env)) {
		env = append(env, k+"="+p.env[k])
	}
	cmd.Env = append(env, "PWD="+cmd.Dir)
	return cmd, spec, nil
}

// childEnviron is the test process's environment without the variables
// the harness sets for each child, plus GOMAXPROCS.
func childEnviron(procs int) []string {
	var env []string
	//detvet:ignore a child inherits the test process's environment by design
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !ownVariable(k) {
			env = append(env, kv)
		}
	}
	return append(env, fmt.Sprintf("GOMAXPROCS=%d", procs))
}

// appendLocale adds TZ, LANG and LC_ALL: the plan's, else the test
// process's.
func appendLocale(env []string, p Plan) []string {
	keep := func(k string) {
		//detvet:ignore a child keeps the test process's locale unless the plan varies it
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if p.tz != "" {
		env = append(env, "TZ="+p.tz)
	} else {
		keep("TZ")
	}
	if p.locale != "" {
		env = append(env, "LANG="+p.locale, "LC_ALL="+p.locale)
	} else {
		keep("LANG")
		keep("LC_ALL")
	}
	return env
}

// specEnv is env with the child spec and the child's mark; the hostname
// is asked for only when the child has its own UTS namespace.
func specEnv(env []string, spec *Spec, newUTS bool) []string {
	s := *spec
	if !newUTS {
		s.Hostname, s.Domain = "", ""
	}
	js, _ := json.Marshal(s)
	return append(slices.Clip(env), specVar+"="+string(js), markVar+"="+spec.Nonce)
}

// symlinkSupport says whether this process may make symbolic links, which
// the working-directory perturbation needs (Windows allows them only with
// a privilege or developer mode), and why not.
var symlinkSupport = sync.OnceValues(func() (bool, string) {
	dir, err := os.MkdirTemp("", "codegenie-link-")
	if err != nil {
		return false, "no temporary directory to try a symbolic link in: " + err.Error()
	}
	defer os.RemoveAll(dir)
	if err := os.Symlink(dir, filepath.Join(dir, "l")); err != nil {
		return false, "symbolic links cannot be made here: " + err.Error()
	}
	return true, ""
})

// linkedDir makes the child's working directory: base/m is a symbolic link
// to the module root (or to wd itself outside a module), and the child
// runs in the same package directory below it. Relative paths resolve as
// in the test process, while os.Getwd reports a different path.
func linkedDir(base, root, wd string) (string, error) {
	link := filepath.Join(base, "m")
	if root == "" {
		root = wd
	}
	if err := os.Symlink(root, link); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil {
		return "", err
	}
	return filepath.Join(link, rel), nil
}

func nonce() string {
	var b [16]byte
	//detvet:ignore a nonce that tells this child's report from a stale one; it is only compared, never printed or digested
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
