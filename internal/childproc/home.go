package childproc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// A child's fresh home: HOME (USERPROFILE, APPDATA and LOCALAPPDATA on
// Windows) and the XDG base directories are new, empty directories, so
// os.UserHomeDir, os.UserConfigDir and os.UserCacheDir differ from the
// test process's. What the official SDKs read there stays readable: each
// configuration entry they look for under the test process's home that
// exists is copied to the same place in the fresh home (see homecopy.go
// for why copies, and their bounds). The Go toolchain's own directories
// (GOENV, GOPATH, GOCACHE) keep what the test process's home gives them,
// so a pipeline that runs the go command finds its settings and its
// module and build caches.

// homeVars lists the variables the home perturbation sets.
func homeVars() []string {
	if runtime.GOOS == "windows" {
		return []string{"HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA"}
	}
	return []string{"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"}
}

// pathVar is the name of the executable search path variable.
func pathVar() string {
	if runtime.GOOS == "windows" {
		return "Path"
	}
	return "PATH"
}

// childSets reports whether the variable k is set for every child by the
// home or PATH perturbation (or kept at the test process's value when
// that cannot be varied), so the discovery of the variables a scenario
// reads leaves it alone. A variable held as configuration is not.
func childSets(k string, held func(string) bool) bool {
	if held(k) {
		return false
	}
	for _, v := range append(homeVars(), pathVar()) {
		if k == v || runtime.GOOS == "windows" && strings.EqualFold(k, v) {
			return true
		}
	}
	return false
}

// homeSupport says whether children can get a fresh home, and why not:
// not when the home variable is held as configuration, nor when the SDK
// configuration under the home cannot be copied into one.
func homeSupport(held func(string) bool) (bool, string) {
	main := "HOME"
	if runtime.GOOS == "windows" {
		main = "USERPROFILE"
	}
	if held(main) {
		return false, main + " is held as configuration (Config.ConfigVars)"
	}
	if err := copyEntries("", sdkConfigEntries()); err != nil {
		return false, "the SDK configuration under the home cannot be copied into a fresh one: " + err.Error()
	}
	return true, ""
}

// homeNote says which SDK configuration entries a fresh home holds as
// copies ("" when none).
func homeNote() string {
	entries := sdkConfigEntries()
	if len(entries) == 0 {
		return ""
	}
	srcs := make([]string, len(entries))
	for i, e := range entries {
		srcs[i] = e.src
	}
	return "SDK configuration: a fresh home holds copies of " + strings.Join(srcs, ", ") + " (a child's writes stay in its copies)"
}

// freshHome makes the fresh home under base and returns the variables
// that point the child at it, then the Go toolchain's directories.
func freshHome(base string) ([]string, error) {
	home := homeDir(base)
	var env []string
	dirs := map[string]string{}
	if runtime.GOOS == "windows" {
		dirs["USERPROFILE"] = home
		if _, ok := os.LookupEnv("HOME"); ok {
			dirs["HOME"] = home
		}
		dirs["APPDATA"] = filepath.Join(home, "AppData", "Roaming")
		dirs["LOCALAPPDATA"] = filepath.Join(home, "AppData", "Local")
	} else {
		dirs["HOME"] = home
		dirs["XDG_CONFIG_HOME"] = filepath.Join(home, ".config")
		dirs["XDG_CACHE_HOME"] = filepath.Join(home, ".cache")
		dirs["XDG_DATA_HOME"] = filepath.Join(home, ".local", "share")
		dirs["XDG_STATE_HOME"] = filepath.Join(home, ".local", "state")
	}
	for _, k := range homeVars() {
		d, ok := dirs[k]
		if !ok {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		env = append(env, k+"="+d)
	}
	if err := copyEntries(home, sdkConfigEntries()); err != nil {
		return nil, fmt.Errorf("copy the SDK configuration into a fresh home: %w", err)
	}
	return append(env, toolchainDirs()...), nil
}

// homeDir is the fresh home of the child whose directory is base.
func homeDir(base string) string { return filepath.Join(base, "home") }

// toolchainDirs pins GOENV, GOPATH and GOCACHE to what the test
// process's home gives them, each unless the test process's environment
// sets it or (GOPATH and GOCACHE) its go env file does, which the child
// then reads through GOENV.
func toolchainDirs() []string {
	var env []string
	home, _ := os.UserHomeDir()     //detvet:ignore the Go toolchain's directories stay the test process's in a child with a fresh home
	cache, _ := os.UserCacheDir()   //detvet:ignore as above
	config, _ := os.UserConfigDir() //detvet:ignore as above
	goenv, set := os.LookupEnv("GOENV")
	if !set && config != "" {
		goenv = filepath.Join(config, "go", "env")
		env = append(env, "GOENV="+goenv)
	}
	inFile := goEnvKeys(goenv)
	pin := func(k, dir string, elem ...string) {
		if _, set := os.LookupEnv(k); set || inFile[k] || dir == "" {
			return
		}
		env = append(env, k+"="+filepath.Join(append([]string{dir}, elem...)...))
	}
	pin("GOPATH", home, "go")
	pin("GOCACHE", cache, "go-build")
	return env
}

// goEnvKeys lists the variables a go env file (go env -w) sets; only
// their names are read.
func goEnvKeys(path string) map[string]bool {
	keys := map[string]bool{}
	if path == "" || path == "off" {
		return keys
	}
	f, err := os.Open(path)
	if err != nil {
		return keys
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	for _, l := range strings.Split(string(b), "\n") {
		if k, _, ok := strings.Cut(l, "="); ok {
			keys[strings.TrimSpace(k)] = true
		}
	}
	return keys
}

// extraPath makes an empty directory under base and returns the PATH
// setting with it first: every lookup finds what it found before, while
// the value differs.
func extraPath(base string) (string, error) {
	d := filepath.Join(base, "path")
	if err := os.Mkdir(d, 0o700); err != nil {
		return "", err
	}
	v := d
	if old := os.Getenv(pathVar()); old != "" { //detvet:ignore the test process's PATH, which a child's PATH extends
		v += string(os.PathListSeparator) + old
	}
	return pathVar() + "=" + v, nil
}

// linkExecutable is linkedExecutable; Inject replaces it.
var linkExecutable = linkedExecutable

// exeRefused says why a child ran the test binary at its own path after
// all ("" while none did).
var exeRefused refusal

// refusal is the first reason a perturbation could not be made.
type refusal struct {
	mu  sync.Mutex
	why string
}

func (r *refusal) note(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.why == "" {
		r.why = why
	}
}

func (r *refusal) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}

// linkedExecutable gives the test binary exe another path under base, a
// hard link, else a copy, with the same base name; the caller removes it
// when the child has ended.
func linkedExecutable(base, exe string) (string, error) {
	src, err := os.Executable() //detvet:ignore the test binary, linked or copied to another path for a child
	if err != nil {
		src = exe
	}
	d := filepath.Join(base, "exe")
	if err := os.Mkdir(d, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(d, filepath.Base(exe))
	if err := os.Link(src, dst); err == nil {
		return dst, nil
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return "", err
	}
	return dst, nil
}
