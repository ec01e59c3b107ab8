package harness

import (
	"fmt"
	"maps"
	"slices"
)

// Process is one run made in a child process of the test binary, with the
// values its environment had, as the child observed them.
type Process struct {
	// Run is the run the process made, Class the class (1-based) of its
	// outcome and PID its process id.
	Run   int `json:"run"`
	Class int `json:"class"`
	PID   int `json:"pid"`
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
	// Children lists the child processes by class, then run
	// (Report.ClassProcesses).
	Children []Process `json:"children,omitempty"`
}

// ClassProcesses returns the child processes whose runs are in class i
// (0-based, an index of Classes), by run.
func (r *Report) ClassProcesses(i int) []Process {
	if r.Processes == nil {
		return nil
	}
	var out []Process
	for _, p := range r.Processes.Children {
		if p.Class == i+1 {
			out = append(out, p)
		}
	}
	return out
}
