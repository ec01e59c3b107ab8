package gate

import (
	"github.com/codegenie/codegenie/internal/hint"
)

// Command is one command a report tells people to run, as data: what it
// is for ("reproduce": go test of the test that ran the gate; "compare":
// bundle diff of the two largest classes' runs in the evidence bundle;
// "re-record": the cassettes recorded again), its words, and the
// directory to run it in ("" for wherever the reader is). String renders
// it as the report prints it.
type Command struct {
	Purpose string   `json:"purpose"`
	Argv    []string `json:"argv"`
	Dir     string   `json:"dir,omitempty"`
}

// String renders c as one POSIX shell line: "cd DIR && WORDS", each word
// quoted.
func (c Command) String() string { return hint.Command(c).String() }
