package harness

import (
	"github.com/codegenie/codegenie/internal/hint"
)

// Command is one command a report tells people to run, as data: what it
// is for (one of the Purpose constants), its words, and the directory to
// run it in (the module root of the test that ran the gate; "" for
// wherever the reader is). String renders it as the report prints it.
type Command struct {
	Purpose string   `json:"purpose"`
	Argv    []string `json:"argv"`
	Dir     string   `json:"dir,omitempty"`
}

// The purposes of a report's commands.
const (
	purposeReproduce = "reproduce" // reruns the test that ran the gate
	purposeCompare   = "compare"   // compares the two largest classes' runs in the evidence bundle
	purposeReRecord  = "re-record" // re-records the cassettes every run missed the same way
)

// String renders c as one POSIX shell line: "cd DIR && WORDS", each word
// quoted.
func (c Command) String() string { return hint.Command(c).String() }

// addCommand lists c in r.Commands and sets the field that names it as
// text.
func (r *Report) addCommand(c Command) {
	r.Commands = append(r.Commands, c)
	switch c.Purpose {
	case purposeReproduce:
		r.ReproCommand = c.String()
	case purposeCompare:
		if r.Divergence != nil {
			r.Divergence.CompareCommand = c.String()
		}
	case purposeReRecord:
		r.ReRecordCommand = c.String()
	}
}

// command returns the Command of a configured shell line, run in the
// module root of the working directory.
func command(purpose, line string) Command {
	return Command(hint.Line(purpose, line, hint.ModuleRoot()))
}
