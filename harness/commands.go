package harness

import (
	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/hint"
)

// addCommand lists c in r.Commands and sets the field that names it as
// text.
func (r *Report) addCommand(c gate.Command) {
	r.Commands = append(r.Commands, c)
	switch c.Purpose {
	case hint.PurposeReproduce:
		r.ReproCommand = c.String()
	case hint.PurposeCompare:
		if r.Divergence != nil {
			r.Divergence.CompareCommand = c.String()
		}
	case hint.PurposeReRecord:
		r.ReRecordCommand = c.String()
	}
}

// command returns the Command of a configured shell line, run in the
// module root of the working directory.
func command(purpose, line string) gate.Command {
	return gate.Command(hint.Line(purpose, line, hint.ModuleRoot()))
}
