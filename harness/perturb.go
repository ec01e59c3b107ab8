package harness

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Process is one run made in a child process of the test binary, with the
// values its environment had, as the child observed them.
type Process struct {
	Run int `json:"run"`
	PID int `json:"pid"`
	// Dir is the working directory (os.Getwd) and TempDir os.TempDir().
	Dir     string `json:"dir"`
	TempDir string `json:"tmpdir"`
	// Zone is TZ with the zone name and offset time.Local gives now.
	Zone string `json:"zone"`
	// Locale is LANG and LC_ALL.
	Locale     string `json:"locale"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// NumCPU is runtime.NumCPU: the CPUs in the child's affinity mask.
	NumCPU   int    `json:"numcpu"`
	Hostname string `json:"hostname"`
	// Domain is the NIS domain name (Linux), Umask the process umask in
	// octal (Linux), Home os.UserHomeDir and Executable os.Executable.
	Domain     string `json:"domain,omitempty"`
	Umask      string `json:"umask,omitempty"`
	Home       string `json:"home,omitempty"`
	Executable string `json:"executable,omitempty"`
	// Env lists the variables the pipeline reads that the child set to
	// other values than the test process has.
	Env map[string]string `json:"env,omitempty"`
}

// String renders p on one line.
func (p Process) String() string {
	return fmt.Sprintf("run %d in child pid %d: %s", p.Run, p.PID, p.environment())
}

// environment renders the values p observed.
func (p Process) environment() string {
	if p.Dir == "" {
		return "(no report)"
	}
	s := fmt.Sprintf("dir %s, TMPDIR %s, TZ %s, %s, GOMAXPROCS %d, NumCPU %d, hostname %s",
		p.Dir, p.TempDir, p.Zone, p.Locale, p.GOMAXPROCS, p.NumCPU, p.Hostname)
	for _, kv := range [][2]string{{"domain", p.Domain}, {"umask", p.Umask}, {"home", p.Home}, {"executable", p.Executable}} {
		if kv[1] != "" {
			s += ", " + kv[0] + " " + kv[1]
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		s += fmt.Sprintf(", %s=%q", k, p.Env[k])
	}
	return s
}

// observeMore fills the values of p that a child's umask, home,
// executable path and domain name perturbations change.
func observeMore(p *Process) {
	p.Domain = domainName()
	p.Umask = umaskText()
	//detvet:ignore the home whose SDK configuration a fresh home links
	p.Home, _ = os.UserHomeDir()
	//detvet:ignore the test binary each child runs, linked to another path by design
	p.Executable, _ = os.Executable()
}

// ProcessSummary says how the child processes were perturbed.
type ProcessSummary struct {
	// Runs is the number of runs made in child processes.
	Runs int `json:"runs"`
	// Parent is the test process's own environment, for comparison.
	Parent Process `json:"parent"`
	// EnvRead lists the environment variables the scenario read in the
	// first child (discovered through the test log), each set to other
	// values in the later children.
	EnvRead []string `json:"env_read,omitempty"`
	// EnvHeld lists the variables the scenario read that are held as
	// configuration (Config.ConfigVars): every child has the test
	// process's values.
	EnvHeld []string `json:"env_held,omitempty"`
	// NotVaried lists what could not be varied here, and why.
	NotVaried []string `json:"not_varied,omitempty"`
}

// Dimensions a child process can vary, as attribution names them.
const (
	dimDir      = "working directory"
	dimTempDir  = "TMPDIR"
	dimTZ       = "TZ (time zone)"
	dimLocale   = "LANG/LC_ALL"
	dimCPUs     = "CPU affinity (runtime.NumCPU)"
	dimHostname = "hostname"
	dimDomain   = "domain name"
	dimUmask    = "umask"
	dimHome     = "HOME and XDG directories"
	dimPath     = "PATH (an extra entry)"
	dimExe      = "executable path"
	dimEnvPre   = "environment variable "
)

// plan is what one child process changes; the zero plan changes nothing
// (a fresh process in the test process's environment).
type plan struct {
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

// dims lists the dimensions p varies.
func (p plan) dims() []string {
	var out []string
	add := func(ok bool, d string) {
		if ok {
			out = append(out, d)
		}
	}
	add(p.dir, dimDir)
	add(p.tmp, dimTempDir)
	add(p.tz != "", dimTZ)
	add(p.locale != "", dimLocale)
	add(p.cpus != nil, dimCPUs)
	add(p.hostname != "", dimHostname)
	add(p.domain != "", dimDomain)
	add(p.umask != 0, dimUmask)
	add(p.home, dimHome)
	add(p.path, dimPath)
	add(p.exe, dimExe)
	for _, k := range slices.Sorted(maps.Keys(p.env)) {
		out = append(out, dimEnvPre+k)
	}
	return out
}

// only returns the plan that varies dimension d of p alone.
func (p plan) only(d string) plan {
	var q plan
	switch d {
	case dimDir:
		q.dir = true
	case dimTempDir:
		q.tmp = true
	case dimTZ:
		q.tz = p.tz
	case dimLocale:
		q.locale = p.locale
	case dimCPUs:
		q.cpus = p.cpus
	case dimHostname:
		q.hostname = p.hostname
	case dimDomain:
		q.domain = p.domain
	case dimUmask:
		q.umask = p.umask
	case dimHome:
		q.home = true
	case dimPath:
		q.path = true
	case dimExe:
		q.exe = true
	default:
		k := strings.TrimPrefix(d, dimEnvPre)
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

// planner builds the plans of the children of one gate.
type planner struct {
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

// newPlanner plans the children of a gate: hostname says whether the
// hostname and domain name can be varied (and hostnameWhy why not),
// held whether a variable is held as configuration (Config.ConfigVars).
func newPlanner(hostname bool, hostnameWhy string, held func(string) bool) *planner {
	p := &planner{hostname: hostname}
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
	}
	if p.path = !held(pathVar()); !p.path {
		p.notes = append(p.notes, "PATH: held as configuration (Config.ConfigVars)")
	}
	return p
}

// full returns the plan of child j: every dimension varied, the
// environment variables read only once they are known (j > 0).
func (p *planner) full(j int) plan {
	q := plan{dir: p.links, tmp: true}
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
