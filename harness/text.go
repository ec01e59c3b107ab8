package harness

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/codegenie/codegenie/gate"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/hint"
)

// String renders the report; see Text.
func (r *Report) String() string {
	var sb strings.Builder
	_ = r.Text(&sb)
	return sb.String()
}

// Text writes the human rendering of r to w; report.json holds all of
// it. A report of a gate that passed is short: the summary line, the
// isolation, the child processes, the allowlist and the class. A failing
// report leads with the answer, the way a go-cmp failure is the diff, in
// one screen: the verdict with the class sizes in one line; what differs
// (the request and pins that vary, the first differing output byte with
// excerpts of both classes, the first divergent event with its field
// diff and causal chain, the failing runs' errors, such as what a
// cassette miss asked and how it differs from its recording, and leaked
// goroutine stacks); the cause, when one was found; and the one command
// to run next. The classes, the other commands, the evidence and the
// run's facts follow, and the sections that explain the answer: the
// child processes' environments when they differ, the stream chunking
// when it is the cause, the allowlist when event tapes were compared.
// Long lists are summarised.
func (r *Report) Text(w io.Writer) error {
	var sb strings.Builder
	if r.OK() {
		r.writePassed(&sb)
	} else {
		shown := r.writeAnswer(&sb)
		writeNext(&sb, r)
		r.writeDetails(&sb, shown)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// writePassed writes the short report of a gate that passed.
func (r *Report) writePassed(sb *strings.Builder) {
	sb.WriteString(r.Summary())
	sb.WriteString("\n")
	writeBudget(sb, r)
	r.writeFacts(sb)
	writeAllowlist(sb, r.Allowlist)
	r.writeClasses(sb, false, nil)
	writeProcesses(sb, r.Processes)
}

// plural is "1 run", "2 runs".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// headline is the first line of a failing report: the verdict, the runs
// and the class sizes.
func (r *Report) headline() string {
	v := string(r.Verdict)
	switch {
	case v == "":
		v = "NO VERDICT"
	case r.Verdict == gate.Pass:
		v = "FAIL"
	}
	runs := fmt.Sprintf("%d runs", r.Runs)
	if r.Runs != r.Iterations {
		runs = fmt.Sprintf("%d of %d runs", r.Runs, r.Iterations)
	}
	if len(r.Classes) == 0 {
		return fmt.Sprintf("%s %s: %s", v, r.Scenario, runs)
	}
	classes := "class"
	if len(r.Classes) > 1 {
		classes = "classes"
	}
	s := fmt.Sprintf("%s %s: %s in %d %s (%s)", v, r.Scenario, runs, len(r.Classes), classes, strings.Join(r.ClassSizes(), ", "))
	if r.Verdict == gate.Broken {
		s += fmt.Sprintf(", every run failed the same way (%s)", r.Classes[0].ErrorKind)
	}
	return s
}

// writeAnswer writes the headline, what differs and the cause, and
// returns the classes whose errors it showed (0-based).
func (r *Report) writeAnswer(sb *strings.Builder) []int {
	sb.WriteString(r.headline())
	sb.WriteString("\n")
	writeBudget(sb, r)
	if r.FailedFast {
		sb.WriteString("stopped at the first divergence (Config.FailFast)\n")
	}
	if r.Runs < r.Floor && !r.FailedFast {
		why := "the time budget ran out"
		if r.Cancelled != "" {
			why = r.Cancelled
		}
		fmt.Fprintf(sb, "%d runs are fewer than the floor of %d: %s; speed the scenario up or raise Budget, never lower the floor to pass\n", r.Runs, r.Floor, why)
	} else if r.Cancelled != "" {
		fmt.Fprintf(sb, "stopped early: %s\n", r.Cancelled)
	}
	if r.RecordingError != "" {
		fmt.Fprintf(sb, "run 0 failed while recording, and what it recorded was not saved; its error:\n%s\n", excerpt.Indent(r.RecordingError))
	}
	var shown []int
	switch d := r.Divergence; {
	case d != nil:
		writeDivergence(sb, d)
		shown = []int{d.ClassA - 1, d.ClassB - 1}
	case len(r.Classes) > 0 && r.RecordingError == "":
		// (After a failed recording, the runs' errors follow from it.)
		shown = []int{0}
	}
	for _, i := range shown {
		if i < 0 || i >= len(r.Classes) {
			continue
		}
		if c := r.Classes[i]; c.ErrorKind != "" && c.ErrorKind != errorKindLeak {
			writeClassError(sb, i, c)
		}
	}
	for _, l := range r.Leaks {
		fmt.Fprintf(sb, "run %d leaked %d goroutine(s):\n", l.Run, len(l.Goroutines))
		for _, g := range l.Goroutines {
			fmt.Fprintf(sb, "%s\n", excerpt.Indent(g.Stack))
		}
	}
	r.writeCause(sb)
	return shown
}

// writeCause writes what the gate found to cause the difference, when it
// found something: a stream chunking, the replayed latency or a
// perturbation of the child processes that alone changes the outcome,
// state carried across runs, the process itself, or the arrival order of
// identical concurrent requests.
func (r *Report) writeCause(sb *strings.Builder) {
	if r.Divergence != nil {
		writeAssignment(sb, r.Divergence.Assignment)
	}
	c := r.Causes
	switch {
	case c != nil && c.Latency:
		writeLatencyCause(sb, c)
	case c != nil && c.Chunking != "":
		if len(c.Depends) > 0 {
			writeChunkingCause(sb, c)
		}
	case c != nil && (c.Carried || c.FreshProcess || c.ControlsDiffered > 0 || len(c.Depends) > 0):
		writeChildCause(sb, c)
	}
	if r.FreshClass > 0 && (c == nil || !c.Carried) {
		fmt.Fprintf(sb, "state is carried across runs: class %d holds the first run of each process (run 0 of the test process and every child process) and is what a fresh process gives; the later runs of the test process differ, because a run fills state the next one reads (a sync.Once, a package-level cache or another global)\n", r.FreshClass)
	}
}

// writeBudget says the time budget ran out before every run was made.
func writeBudget(sb *strings.Builder, r *Report) {
	if r.BudgetExceeded {
		fmt.Fprintf(sb, "!!! TIME BUDGET EXCEEDED: %d of %d iterations ran in %v (budget %v); floor %d\n", r.Runs, r.Iterations, r.Wall.Round(time.Millisecond), r.Budget, r.Floor)
	}
}

// writeClassError writes the error of class i's first run, indented.
func writeClassError(sb *strings.Builder, i int, c gate.Class) {
	fmt.Fprintf(sb, "class %d, run %d failed (%s):\n%s\n", i+1, c.FirstRun, c.ErrorKind, excerpt.Indent(c.Message))
}

// writeDetails writes what follows the answer and the next command: the
// classes, the sections that explain the answer, the evidence, the other
// commands, the errors of the classes the answer did not show, and the
// run's facts.
func (r *Report) writeDetails(sb *strings.Builder, shown []int) {
	sb.WriteString("\n")
	children := r.childrenDiffer()
	r.writeClasses(sb, children, shown)
	if children {
		writeProcesses(sb, r.Processes)
	}
	if c := r.Causes; c != nil && c.Chunking == "" && !c.Latency && !c.Carried && !c.FreshProcess && c.ControlsDiffered == 0 && len(c.Depends) == 0 {
		writeChildCause(sb, c)
	}
	if c := r.Causes; c != nil && c.Chunking != "" && len(c.Depends) > 0 {
		writeChunking(sb, r.Chunking)
	}
	if d := r.Divergence; d != nil && d.Event != nil {
		writeAllowlist(sb, r.Allowlist)
	}
	writeEvidenceList(sb, r)
	writeOtherCommands(sb, r)
	for i, c := range r.Classes {
		if c.ErrorKind != "" && strings.Contains(c.Message, "\n") && !slices.Contains(shown, i) && i < maxClassesListed {
			writeClassError(sb, i, c)
		}
	}
	r.writeFacts(sb)
	sb.WriteString(r.Summary())
	sb.WriteString("\n")
}

// childrenDiffer reports whether the child processes' environments
// explain something: a class holds runs of child processes only, or the
// cause was traced through child processes.
func (r *Report) childrenDiffer() bool {
	if r.Processes == nil || len(r.Classes) < 2 {
		return false
	}
	if c := r.Causes; c != nil && c.Chunking == "" && !c.Latency {
		return true
	}
	for i, c := range r.Classes {
		if c.InProcess == 0 && len(r.ClassProcesses(i)) > 0 {
			return true
		}
	}
	return false
}

// writeFacts writes the isolation and what run 0 recorded.
func (r *Report) writeFacts(sb *strings.Builder) {
	fmt.Fprintf(sb, "isolation: %s\n", r.Isolation)
	if r.OK() {
		// A gate that passed keeps what run 0 recorded.
		for _, p := range r.Recorded {
			fmt.Fprintf(sb, "recorded %s in run 0 (the record switch selected it); every run replayed it\n", p)
		}
	}
	if r.RecordingDiscarded != "" {
		fmt.Fprintf(sb, "%s\n", r.RecordingDiscarded)
	}
}

// writeEvidenceList lists the files written for the failure.
func writeEvidenceList(sb *strings.Builder, r *Report) {
	if len(r.EvidenceFiles) > 0 {
		sb.WriteString("evidence:\n")
		for _, e := range r.EvidenceFiles {
			fmt.Fprintf(sb, "  %s: %s", e.What, e.Path)
			if e.Note != "" {
				fmt.Fprintf(sb, "  (%s)", e.Note)
			}
			sb.WriteString("\n")
		}
	}
	if r.EvidenceError != "" {
		fmt.Fprintf(sb, "evidence could not be written: %s\n", r.EvidenceError)
	}
}

// commandRank orders a report's commands, the one to run next first:
// re-recording when every run missed the cassette the same way (it is
// the answer when the requests changed on purpose), comparing the two
// runs in full, reproducing after a fix.
func commandRank(c gate.Command) int {
	switch c.Purpose {
	case hint.PurposeReRecord:
		return 0
	case hint.PurposeCompare:
		return 1
	case hint.PurposeReproduce:
		return 2
	}
	return 3
}

// sortedCommands is r.Commands, the one to run next first.
func sortedCommands(r *Report) []gate.Command {
	cs := slices.Clone(r.Commands)
	slices.SortStableFunc(cs, func(a, b gate.Command) int { return commandRank(a) - commandRank(b) })
	return cs
}

// writeNext writes the one thing to do next: fix what made the
// recording fail, or run the first of the report's commands, with what
// it is for.
func writeNext(sb *strings.Builder, r *Report) {
	cs := sortedCommands(r)
	switch {
	case r.RecordingError != "":
		sb.WriteString("next: fix what made run 0 fail while recording (its error is above), then record again as before\n")
	case len(cs) > 0:
		writeCommand(sb, r, "next: ", cs[0])
	}
}

// writeOtherCommands writes the commands after the one to run next.
func writeOtherCommands(sb *strings.Builder, r *Report) {
	cs := sortedCommands(r)
	if r.RecordingError == "" && len(cs) > 0 {
		cs = cs[1:]
	}
	lead := "then, "
	if r.RecordingError == "" && len(r.Commands) > 0 && sortedCommands(r)[0].Purpose == hint.PurposeReRecord {
		lead = "otherwise, "
	}
	for _, c := range cs {
		writeCommand(sb, r, lead, c)
	}
}

// writeCommand writes c after lead, with what it is for.
func writeCommand(sb *strings.Builder, r *Report, lead string, c gate.Command) {
	switch c.Purpose {
	case hint.PurposeCompare:
		fmt.Fprintf(sb, "%scompare the two runs in full: %s\n", lead, c)
	case hint.PurposeReproduce:
		switch {
		case lead != "next: ":
			lead += "after a fix, "
		case len(r.Classes) == 1 && r.Classes[0].ErrorKind == errorKindCredentials:
			lead += "give the SDK credentials in the test as the miss above says, then "
		}
		fmt.Fprintf(sb, "%sreproduce: %s\n", lead, c)
	case hint.PurposeReRecord:
		why := "every run missed the cassette the same way; if the requests changed on purpose"
		switch r.Classes[0].ErrorKind {
		case errorKindCassetteAbsent:
			why = "the cassette does not exist; to record it"
		case errorKindCassetteUnused:
			why = "every run left the same recorded interactions unused; if the requests changed on purpose"
		case errorKindAPIVersion:
			why = "the SDK's API version changed since the cassette was recorded, and a new version can change the answers"
		}
		fmt.Fprintf(sb, "%s%s, re-record it: %s\n", lead, why, c)
	default:
		fmt.Fprintf(sb, "%s%s: %s\n", lead, c.Purpose, c)
	}
}

func writeAllowlist(sb *strings.Builder, al []AllowEntry) {
	sb.WriteString("allowlist (fields allowed to differ):\n")
	if len(al) == 0 {
		sb.WriteString("  (none: every field is compared)\n")
	}
	for _, a := range al {
		fmt.Fprintf(sb, "  %s: %s\n", a.Field, a.Reason)
	}
}

// maxClassesListed is the number of classes a report lists one by one;
// report.json lists them all.
const maxClassesListed = 8

// writeClasses lists the classes, at most maxClassesListed of them, with
// the child processes of those made only of child runs when procs; the
// error of a class in shown (0-based) is the one shown above.
func (r *Report) writeClasses(sb *strings.Builder, procs bool, shown []int) {
	cs := r.Classes
	if len(cs) == 0 {
		return
	}
	sb.WriteString("classes (runs with the same key, output, tape and error kind), largest first:\n")
	for i, c := range cs[:min(len(cs), maxClassesListed)] {
		fmt.Fprintf(sb, "  %d: %s, first run %d, output %s, chain %s, %d events", i+1, plural(c.Runs, "run"), c.FirstRun, excerpt.Digest(c.OutputDigest), excerpt.Digest(c.ChainDigest), c.Events)
		if c.Key != "" {
			fmt.Fprintf(sb, ", key %s", c.Key[:min(16, len(c.Key))])
		}
		switch {
		case c.ErrorKind != "" && slices.Contains(shown, i):
			fmt.Fprintf(sb, ", failed (%s, as above)", c.ErrorKind)
		case c.ErrorKind != "":
			fmt.Fprintf(sb, ", failed (%s): %s", c.ErrorKind, firstLine(c.Message))
		}
		children := r.ClassProcesses(i)
		fmt.Fprintf(sb, "; %d in the test process, %d in child processes\n", c.InProcess, len(children))
		if procs && c.InProcess == 0 {
			for _, p := range children {
				fmt.Fprintf(sb, "     %s\n", p)
			}
		}
	}
	if rest := cs[min(len(cs), maxClassesListed):]; len(rest) > 0 {
		fmt.Fprintf(sb, "  ... and %d more classes (%s); report.json lists every class\n", len(rest), strings.Join(gate.Outcome{Classes: rest}.ClassSizes(), ", "))
	}
}

func writeProcesses(sb *strings.Builder, ps *ProcessSummary) {
	if ps == nil {
		return
	}
	fmt.Fprintf(sb, "child processes: %d run(s); the test process (pid %d) has %s\n", ps.Runs, ps.Parent.PID, ps.Parent.environment())
	if len(ps.EnvRead) > 0 {
		fmt.Fprintf(sb, "  environment variables the scenario reads, set to other values in later children: %s\n", strings.Join(ps.EnvRead, ", "))
	}
	if len(ps.EnvHeld) > 0 {
		fmt.Fprintf(sb, "  not varied: configuration (Config.ConfigVars): %s\n", strings.Join(ps.EnvHeld, ", "))
	}
	for _, n := range ps.NotVaried {
		fmt.Fprintf(sb, "  not varied: %s\n", n)
	}
}

// writeDivergence writes how the kept runs of the two largest classes
// differ: request, pins, output bytes, event tape.
func writeDivergence(sb *strings.Builder, d *Divergence) {
	fmt.Fprintf(sb, "class %d (run %d) against class %d (run %d):\n", d.ClassA, d.RunA, d.ClassB, d.RunB)
	if d.RequestVaries {
		sb.WriteString("the request itself varies between runs: the nondeterminism is upstream of the recorded call, so fix its source\n")
		fmt.Fprintf(sb, "request of run %d against run %d:\n", d.RunA, d.RunB)
		for _, l := range d.RequestDiff {
			fmt.Fprintf(sb, "  %s\n", l)
		}
	}
	for _, p := range d.PinDiff {
		fmt.Fprintf(sb, "pin differs: %s\n", p)
	}
	if o := d.Output; o != nil {
		fmt.Fprintf(sb, "output bytes differ at offset %d (len run %d = %d, len run %d = %d)\n", o.Offset, d.RunA, o.LenA, d.RunB, o.LenB)
		fmt.Fprintf(sb, "  run %d: %s\n  run %d: %s\n", d.RunA, o.ExcerptA, d.RunB, o.ExcerptB)
		fmt.Fprintf(sb, "  digests: %s != %s\n", o.DigestA, o.DigestB)
	}
	switch {
	case d.Event != nil:
		fmt.Fprintf(sb, "event tape (a = run %d, b = run %d):\n", d.RunA, d.RunB)
		var eb strings.Builder
		_ = d.Event.Text(&eb)
		sb.WriteString(excerpt.Indent(eb.String()))
		sb.WriteString("\n")
	case d.Output == nil && !d.RequestVaries:
		sb.WriteString("output bytes and event tapes are identical (after stripping the allowlist)\n")
	}
}

// writeAssignment writes the requests several recorded interactions
// matched that were answered differently in different classes.
func writeAssignment(sb *strings.Builder, lines []string) {
	if len(lines) == 0 {
		return
	}
	sb.WriteString("the outcome depends on the arrival order of identical concurrent requests: several recorded interactions match one request, and the lanes got different ones in different classes:\n")
	for _, l := range lines {
		fmt.Fprintf(sb, "  %s\n", l)
	}
	sb.WriteString("  make the lanes' requests differ, or, if the pipeline means to send identical requests concurrently, set Config.AssignByLane so each lane always gets the same recorded answer\n")
}

// writeChildCause writes what making a child run again in fresh
// processes showed.
func writeChildCause(sb *strings.Builder, c *gate.Causes) {
	fmt.Fprintf(sb, "only child processes differed; run %d (class %d) was made again in fresh processes:\n", c.Run, c.Class)
	switch {
	case c.Carried:
		fmt.Fprintf(sb, "  state is carried across runs: %d fresh processes with nothing perturbed all give class %d's outcome, no run in the test process does; the test process carries state from earlier work in it (a run, scenario or test filled a cache, a sync.Once or another global)\n", c.Controls, c.Class)
	case c.FreshProcess:
		fmt.Fprintf(sb, "  %d fresh processes with nothing perturbed differ too: the outcome depends on the process itself (its pid, start time, memory addresses or state computed at start-up)\n", c.Controls)
	case c.ControlsDiffered > 0:
		fmt.Fprintf(sb, "  %d of %d fresh processes with nothing perturbed differ: the outcome depends on state random per process (a hash or map seed, the pid, memory addresses); no perturbation is blamed\n", c.ControlsDiffered, c.Controls)
	case len(c.Unsteady) > 0:
		fmt.Fprintf(sb, "  tries of one perturbation disagree (%s): the outcome depends on state random per process; no perturbation is blamed\n", strings.Join(c.Unsteady, "; "))
	case len(c.Depends) > 0:
		fmt.Fprintf(sb, "  the outcome depends on: %s (each alone changes it in %d of %d tries; %d fresh processes with nothing perturbed do not)\n", strings.Join(c.Depends, "; "), attributionTries, attributionTries, c.Controls)
	default:
		fmt.Fprintf(sb, "  no single perturbation alone changes it (tried: %s): the combination does, or the difference is intermittent\n", strings.Join(c.Tried, ", "))
	}
	for _, f := range c.Failed {
		fmt.Fprintf(sb, "  could not try %s\n", f)
	}
}

// writeLatencyCause writes what making run c.Run again with the
// latencies of run 0 showed.
func writeLatencyCause(sb *strings.Builder, c *gate.Causes) {
	fmt.Fprintf(sb, "the outcome depends on replayed latency: run %d (class %d), made again with the replayed latencies of run 0, agrees with run 0 (%d times), and with its own it differs again.\n", c.Run, c.Class, latencyControls)
	sb.WriteString("  How long a response took decides what reaches the output: a timeout, a deadline or an elapsed-time budget around a call, or a measured duration in the output. Bound the work by a count or by a context deadline that ends the run the same way, or keep durations out of the output.\n")
}
