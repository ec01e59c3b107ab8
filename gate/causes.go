package gate

// Causes is what a gate traced a difference to. A difference that only
// child processes showed is traced to what was perturbed: fresh
// processes with nothing perturbed (the controls), then processes with
// one perturbation of the differing child each, all making the same
// run, each control and perturbation three times. A difference between
// runs of the test process is traced to the stream chunking (Chunking
// is set): the run is made again there with its bodies delivered as
// recorded; else to the replayed latency (Latency is set): the run is
// made again with the latencies of run 0.
type Causes struct {
	// Run is the child run traced and Class its class (1-based).
	Run   int `json:"run"`
	Class int `json:"class"`
	// Controls is the number of controls made and ControlsDiffered the
	// number whose outcome differed from the test process's runs.
	Controls         int `json:"controls,omitempty"`
	ControlsDiffered int `json:"controls_differed,omitempty"`
	// FreshProcess says every control differed: the outcome depends on
	// the process itself (its pid, start time, addresses or start-up
	// state), not on anything perturbed. Carried says, moreover, that
	// every control gave class Class's outcome: the test process carries
	// state that fresh processes do not have.
	FreshProcess bool `json:"fresh_process,omitempty"`
	Carried      bool `json:"carried,omitempty"`
	// Depends lists the perturbations that alone change the outcome in
	// every try, e.g. "TZ (time zone)" or "environment variable REGION";
	// it is empty when a control or a perturbation's tries disagree.
	Depends []string `json:"depends,omitempty"`
	// Unsteady lists the perturbations whose tries disagreed, with how
	// many differed ("TZ (time zone): 1 of 3").
	Unsteady []string `json:"unsteady,omitempty"`
	// Tried lists every perturbation tried; Failed the tries whose child
	// failed to report (their error).
	Tried  []string `json:"tried,omitempty"`
	Failed []string `json:"failed,omitempty"`
	// Chunking is the chunk plan of Run when it was made in the test
	// process and traced to the stream chunking (see Report.Chunking).
	Chunking string `json:"chunking,omitempty"`
	// Latency says Run was made in the test process and traced to the
	// replayed latency: made again with the latencies of run 0 it agrees
	// with run 0, with its own it differs again.
	Latency bool `json:"latency,omitempty"`
}
