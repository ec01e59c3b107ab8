package childproc

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Dimensions a child process can vary, as [Plan.Dims] names them; a
// gate's report names the ones an outcome depends on.
const (
	DimDir      = "working directory"
	DimTempDir  = "TMPDIR"
	DimTZ       = "TZ (time zone)"
	DimLocale   = "LANG/LC_ALL"
	DimCPUs     = "CPU affinity (runtime.NumCPU)"
	DimHostname = "hostname"
	DimDomain   = "domain name"
	DimUmask    = "umask"
	DimHome     = "HOME and XDG directories"
	DimPath     = "PATH (an extra entry)"
	DimExe      = "executable path"
	DimEnvPre   = "environment variable " // followed by the variable's name
)

// Plan is what one child process changes; the zero Plan changes nothing
// (a fresh process in the test process's environment).
type Plan struct {
	dir, tmp bool
	tz       string
	locale   string
	cpus     []int // affinity mask; nil keeps the test process's
	hostname string
	domain   string
	umask    int // 0 keeps the test process's
	home     bool
	path     bool
	exe      bool
	env      map[string]string
}

// Env returns the environment variables the scenario reads that p sets to
// other values than the test process has.
func (p Plan) Env() map[string]string { return p.env }

// Dims lists the dimensions p varies.
func (p Plan) Dims() []string {
	var out []string
	add := func(ok bool, d string) {
		if ok {
			out = append(out, d)
		}
	}
	add(p.dir, DimDir)
	add(p.tmp, DimTempDir)
	add(p.tz != "", DimTZ)
	add(p.locale != "", DimLocale)
	add(p.cpus != nil, DimCPUs)
	add(p.hostname != "", DimHostname)
	add(p.domain != "", DimDomain)
	add(p.umask != 0, DimUmask)
	add(p.home, DimHome)
	add(p.path, DimPath)
	add(p.exe, DimExe)
	for _, k := range slices.Sorted(maps.Keys(p.env)) {
		out = append(out, DimEnvPre+k)
	}
	return out
}

// Only returns the plan that varies dimension d of p alone.
func (p Plan) Only(d string) Plan {
	var q Plan
	switch d {
	case DimDir:
		q.dir = true
	case DimTempDir:
		q.tmp = true
	case DimTZ:
		q.tz = p.tz
	case DimLocale:
		q.locale = p.locale
	case DimCPUs:
		q.cpus = p.cpus
	case DimHostname:
		q.hostname = p.hostname
	case DimDomain:
		q.domain = p.domain
	case DimUmask:
		q.umask = p.umask
	case DimHome:
		q.home = true
	case DimPath:
		q.path = true
	case DimExe:
		q.exe = true
	default:
		k := strings.TrimPrefix(d, DimEnvPre)
		q.env = map[string]string{k: p.env[k]}
	}
	return q
}

// Umasks, zones and locales children take in turn; those equal to the
// test process's are skipped. The zones have unusual offsets (+12:45, -3:30,
// +5:45, +10:30) so a local-time reading differs from any usual zone.
var (
	childUmasks  = []int{0o002, 0o077, 0o022}
	childZones   = []string{"Pacific/Chatham", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe", "UTC"}
	childLocales = []string{"tr_TR.UTF-8", "de_DE.ISO-8859-1", "C", "ja_JP.UTF-8"}
)

// Planner builds the plans of the children of one gate. Its methods are
// not safe for concurrent use: Discovered is called before the later
// children are planned, Summary after every child ended.
type Planner struct {
	held     func(string) bool
	zones    []string // loadable and unlike the test process's zone
	locales  []string
	cpus     []int // the test process's affinity mask
	hostname bool
	links    bool // the working directory can be varied (symbolic links work)
	umasks   []int
	home     bool              // HOME and the XDG directories can be varied
	path     bool              // PATH can be varied
	env      map[string]string // the test process's values of the variables read ("" and absent alike)
	envRead  []string
	envHeld  []string // variables read and held as configuration
	notes    []string
}

// NewPlanner plans the children of a gate; held says whether a variable
// is held as configuration (harness Config.ConfigVars): children keep the
// test process's value of such a variable.
func NewPlanner(held func(string) bool) *Planner {
	hostname, hostnameWhy := hostnameSupport()
	p := &Planner{held: held, hostname: hostname, env: map[string]string{}}
	now := time.Now()
	name, off := now.Zone()
	for _, z := range childZones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			continue
		}
		if n, o := now.In(loc).Zone(); n != name || o != off {
			p.zones = append(p.zones, z)
		}
	}
	if len(p.zones) == 0 {
		p.notes = append(p.notes, "time zone: no zone other than the test process's could be loaded (no tzdata)")
	}
	for _, l := range childLocales {
		if l != os.Getenv("LANG") {
			p.locales = append(p.locales, l)
		}
	}
	p.cpus = affinity()
	if affinityNote != "" {
		p.notes = append(p.notes, "CPU count: "+affinityNote)
	} else if len(p.cpus) < 2 {
		p.notes = append(p.notes, fmt.Sprintf("CPU count: the test process may use %d CPU(s), so no child can see another count", len(p.cpus)))
	}
	if !hostname {
		p.notes = append(p.notes, "hostname and domain name: "+hostnameWhy)
	}
	var why string
	if p.links, why = symlinkSupport(); !p.links {
		p.notes = append(p.notes, "working directory: "+why)
	}
	if why := umaskNote(); why != "" {
		p.notes = append(p.notes, "umask: "+why)
	} else {
		own := processUmask()
		for _, m := range childUmasks {
			if m != own {
				p.umasks = append(p.umasks, m)
			}
		}
	}
	p.home, why = homeSupport(held)
	if !p.home {
		p.notes = append(p.notes, "HOME and XDG directories: "+why)
	} else if n := homeNote(); n != "" {
		p.notes = append(p.notes, n)
	}
	if p.path = !held(pathVar()); !p.path {
		p.notes = append(p.notes, "PATH: held as configuration (Config.ConfigVars)")
	}
	return p
}

// Plan returns the plan of child j: every dimension varied, the
// environment variables read only once they are known (after Discovered).
func (p *Planner) Plan(j int) Plan {
	q := Plan{dir: p.links, tmp: true}
	if len(p.zones) > 0 {
		q.tz = p.zones[j%len(p.zones)]
	}
	q.locale = p.locales[j%len(p.locales)]
	if n := len(p.cpus); n >= 2 {
		if j%2 == 0 {
			q.cpus = []int{p.cpus[(j/2)%n]}
		} else {
			q.cpus = p.cpus[:n-1]
		}
	}
	if p.hostname {
		q.hostname = fmt.Sprintf("codegenie-child-%d", j)
		q.domain = fmt.Sprintf("codegenie-child-%d.invalid", j)
	}
	if len(p.umasks) > 0 {
		q.umask = p.umasks[j%len(p.umasks)]
	}
	q.home, q.path, q.exe = p.home, p.path, true
	if len(p.envRead) > 0 {
		q.env = map[string]string{}
		for _, k := range p.envRead {
			q.env[k] = perturbedValue(p.env[k], j)
		}
	}
	return q
}

// Discovered takes the environment variables the first child read (see
// [Child.Discover]): the later plans set each to other values, except
// those the harness sets for every child and those held as configuration.
func (p *Planner) Discovered(read []string) {
	for _, k := range read {
		switch {
		case ownVariable(k), childSets(k, p.held):
		case p.held(k):
			p.envHeld = append(p.envHeld, k)
		default:
			p.envRead = append(p.envRead, k)
			p.env[k] = os.Getenv(k) //detvet:ignore the perturbation varies the values the test process has
		}
	}
}

// Summary returns the variables read that later children set to other
// values (envRead) and those held as configuration (envHeld), and what
// could not be varied on this machine, and why.
func (p *Planner) Summary() (envRead, envHeld, notVaried []string) {
	notVaried = append(notVaried, p.notes...)
	if why := umaskNote(); why != "" && len(p.umasks) > 0 {
		notVaried = append(notVaried, "umask: "+why)
	}
	if why := exeRefused.get(); why != "" {
		notVaried = append(notVaried, "executable path: "+why)
	}
	if host, why := hostnameSupport(); !host && p.hostname {
		notVaried = append(notVaried, "hostname and domain name: "+why)
	}
	switch {
	case !groupsSupported:
		notVaried = append(notVaried, "processes a child starts: not found or killed when it ends (no process groups on "+runtime.GOOS+")")
	case !marksSupported:
		notVaried = append(notVaried, "processes a child starts that leave its process group (setsid, a daemon's double fork): not found or killed when it ends (found through /proc on Linux only)")
	}
	return p.envRead, p.envHeld, notVaried
}

// perturbedValue is child j's value for a variable whose value in the test
// process is old: another absolute path for a path, another word else.
func perturbedValue(old string, j int) string {
	v := fmt.Sprintf("codegenie-child-%d", j)
	if filepath.IsAbs(old) {
		//detvet:ignore a perturbed path is another absolute path under the temporary directory by design
		v = filepath.Join(os.TempDir(), v)
	}
	if v == old {
		v += "-x"
	}
	return v
}

// ownVariables are set by the harness for every child (or belong to the
// test binary's own machinery) and are never discovered as read.
var ownVariables = map[string]bool{
	"PWD": true, "TMPDIR": true, "TZ": true, "LANG": true, "LC_ALL": true,
	"GOMAXPROCS": true, "GODEBUG": true, "GOTRACEBACK": true, "GOCOVERDIR": true,
	"GOTMPDIR": true, // t.TempDir's parent directory
}

// ownPrefixes mark variables of codegenie itself.
var ownPrefixes = []string{"CODEGENIE_HARNESS_", "CODEGENIE_GATE_", "CODEGENIE_LEDGER"}

func ownVariable(k string) bool {
	if ownVariables[k] {
		return true
	}
	for _, p := range ownPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}
