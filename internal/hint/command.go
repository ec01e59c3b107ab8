package hint

import "strings"

// Command is one command a message tells people to run: what it is for,
// its words, and the directory it runs in ("" for wherever the reader
// is, normally the module root).
type Command struct {
	Purpose string   `json:"purpose"`
	Argv    []string `json:"argv"`
	Dir     string   `json:"dir,omitempty"`
}

// The purposes of the commands a gate's report and result file name.
const (
	PurposeReproduce = "reproduce" // go test of the test that ran the gate
	PurposeCompare   = "compare"   // bundle diff of the two largest classes' runs in the evidence bundle
	PurposeReRecord  = "re-record" // the reproduce command with the cassettes' record flag
)

// String renders c as one POSIX shell line: "cd DIR && WORDS", each word
// quoted.
func (c Command) String() string {
	line := Join(c.Argv)
	if c.Dir == "" {
		return line
	}
	return "cd " + Quote(c.Dir) + " && " + line
}

// Line returns the Command for a shell line someone configured (a
// reproduce or re-record command given as text), run in dir: its words
// when the line is plain words and single-quoted strings (as Join
// writes them), else sh -c with the line.
func Line(purpose, line, dir string) Command {
	if argv, ok := split(line); ok {
		return Command{Purpose: purpose, Argv: argv, Dir: dir}
	}
	return Command{Purpose: purpose, Argv: []string{"sh", "-c", line}, Dir: dir}
}

// split splits a line of words separated by spaces, each made of plain
// characters (those Quote leaves unquoted), single-quoted strings
// and backslash-escaped single quotes; ok is false for anything else
// (an expansion, an operator, a double quote, a newline).
func split(line string) (argv []string, ok bool) {
	var w strings.Builder
	in, inWord := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case in && ch == '\'':
			in = false
		case in:
			w.WriteByte(ch)
		case ch == '\'':
			in, inWord = true, true
		case ch == '\\' && i+1 < len(line) && line[i+1] == '\'':
			w.WriteByte('\'')
			i++
			inWord = true
		case ch == ' ':
			if inWord {
				argv = append(argv, w.String())
				w.Reset()
				inWord = false
			}
		case Quote(string(ch)) == string(ch):
			w.WriteByte(ch)
			inWord = true
		default:
			return nil, false
		}
	}
	if in {
		return nil, false
	}
	if inWord {
		argv = append(argv, w.String())
	}
	return argv, len(argv) > 0
}
