package gate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/hint"
)

// explanation is what a merge says of a result that did not pass: the
// report's first screen the result carries, the crash output of a
// crashed gate, where the evidence is and what to run, with every path
// as seen from where the reader is (see Result.Folder).
type explanation struct {
	verdict, scenario string
	test, pkg, shard  string
	text              string // the first screen, printable
	// crashFile and crash are the crash output file and its first lines
	// (or what is wrong with it).
	crashFile, crash string
	evidence         string
	commands         []placedCommand
}

// placedCommand is a command with where it runs.
type placedCommand struct {
	what, where, line string
}

// Explain writes what a merge says of r when r did not pass (nothing
// when it passed): the verdict, the scenario and its test, package and
// shard; the first screen of its report (the headline, what differs and
// the cause, as the result carries them); for a crashed gate, the run in
// progress and the first lines of the crash output; the evidence bundle;
// and the commands, each with where to run it: the compare command from
// the directory the results were read from (r.Folder) is relative to,
// where the CI artifacts were downloaded, and reproduce from the module
// root. Text from the result is printed with control characters escaped.
func (r Result) Explain(w io.Writer) error {
	if r.OK() {
		return nil
	}
	x := r.explain()
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s %s (test %s, package %s", x.verdict, x.scenario, x.test, x.pkg)
	if x.shard != "" {
		fmt.Fprintf(&sb, ", shard %s", x.shard)
	}
	sb.WriteString(")\n")
	fmt.Fprintf(&sb, "%s\n", excerpt.Indent(x.text))
	if x.crashFile != "" {
		fmt.Fprintf(&sb, "  crash output: %s\n%s\n", x.crashFile, excerpt.Indent(excerpt.Indent(x.crash)))
	}
	if x.evidence != "" {
		fmt.Fprintf(&sb, "  evidence: %s (report.txt and report.json beside it)\n", x.evidence)
	}
	for _, c := range x.commands {
		fmt.Fprintf(&sb, "  %s, %s:\n    %s\n", c.what, c.where, c.line)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// ExplainMarkdown writes what Explain writes as Markdown, for a CI job
// summary: a heading, the first screen and the crash output in code
// blocks, the evidence as a code span, each command in a code block of
// its own.
func (r Result) ExplainMarkdown(w io.Writer) error {
	if r.OK() {
		return nil
	}
	x := r.explain()
	var sb strings.Builder
	fmt.Fprintf(&sb, "### %s %s\n\ntest %s, package %s", excerpt.MarkdownCode(x.verdict), excerpt.MarkdownCode(x.scenario), excerpt.MarkdownCode(x.test), excerpt.MarkdownCode(x.pkg))
	if x.shard != "" {
		fmt.Fprintf(&sb, ", shard %s", excerpt.MarkdownCode(x.shard))
	}
	sb.WriteString("\n\n")
	sb.WriteString(excerpt.MarkdownFence(x.text, "text"))
	if x.crashFile != "" {
		fmt.Fprintf(&sb, "\ncrash output %s:\n\n%s", excerpt.MarkdownCode(x.crashFile), excerpt.MarkdownFence(x.crash, "text"))
	}
	if x.evidence != "" {
		fmt.Fprintf(&sb, "\nevidence: %s (report.txt and report.json beside it)\n", excerpt.MarkdownCode(x.evidence))
	}
	for _, c := range x.commands {
		fmt.Fprintf(&sb, "\n%s, %s:\n\n%s", c.what, c.where, excerpt.MarkdownFence(c.line, "sh"))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func (r Result) explain() explanation {
	x := explanation{verdict: shownVerdict(r), scenario: quoteName(r.Scenario), test: quoteName(r.Test), pkg: quoteName(r.ImportPath)}
	if r.Shard != "" {
		x.shard = quoteName(r.Shard)
	}
	text := r.Explanation
	if text == "" {
		text = r.Err().Error()
	}
	x.text = clipLines(printable(text), maxExplanationLines, "report.txt beside the evidence bundle has the full report")
	if r.CrashOutput != "" {
		x.crashFile = printable(r.inFolder(r.CrashOutput))
		x.crash = r.crashHead()
	}
	if r.Evidence != "" {
		x.evidence = printable(r.inFolder(r.Evidence))
	}
	for _, c := range r.Commands {
		pc := placedCommand{where: "in the module root"}
		switch c.Purpose {
		case hint.PurposeCompare:
			pc.what = "compare the two runs in full"
			pc.where = "from the directory the merge ran in"
			if r.Evidence != "" {
				c.Argv = replaced(c.Argv, r.Evidence, r.inFolder(r.Evidence))
			}
		case hint.PurposeReproduce:
			pc.what = "reproduce"
		case hint.PurposeReRecord:
			pc.what = "if the requests changed on purpose, re-record the cassettes"
		default:
			continue
		}
		if r.Folder == "" && c.Purpose == hint.PurposeCompare {
			pc.where = "in the results folder"
		}
		pc.line = hint.Command(c).String()
		x.commands = append(x.commands, pc)
	}
	return x
}

// maxCrashHead bounds what is read of a crash output file, and
// crashHeadLines what is shown of it.
const (
	maxCrashHead   = 64 << 10
	crashHeadLines = 30
)

// crashHead returns the first lines of r's crash output file, or what is
// wrong with it. It opens only a regular file (a crash output file comes
// with a result from another machine).
func (r Result) crashHead() string {
	p := r.inFolder(r.CrashOutput)
	fi, err := os.Lstat(p)
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", p, fi.Mode().Type())
	}
	var b []byte
	if err == nil {
		b, err = readHead(p, maxCrashHead)
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "(not there: upload and download the whole results folder)"
	case err != nil:
		return "(cannot be read: " + printable(err.Error()) + ")"
	case len(strings.TrimSpace(string(b))) == 0:
		return "(empty: the process ended with no fatal error report: killed by a signal, such as SIGKILL from the out-of-memory killer or a CI timeout, or it called os.Exit)"
	}
	return clipLines(printable(string(b)), crashHeadLines, "the crash output file has the rest")
}

// readHead reads at most n bytes from the start of the file at p.
func readHead(p string, n int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
