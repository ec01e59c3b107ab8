package harness

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// String renders the report; see Text.
func (r *Report) String() string {
	var sb strings.Builder
	_ = r.Text(&sb)
	return sb.String()
}

// Text writes the full human rendering of r to w: the verdict; every
// class with its size, first run, digests, error and child processes;
// what varies between the two largest classes (output bytes with
// excerpts, the first divergent event with its payload diff and causal
// chain, pins, requests); what a perturbation alone changed; leaked
// goroutine stacks; where the evidence is; and the commands that
// reproduce the failure and, for a cassette miss only, re-record.
func (r *Report) Text(w io.Writer) error {
	var sb strings.Builder
	sb.WriteString(r.Summary())
	sb.WriteString("\n")
	if r.BudgetExceeded {
		fmt.Fprintf(&sb, "!!! TIME BUDGET EXCEEDED: %d of %d iterations ran in %v (budget %v); floor %d\n", r.Runs, r.Iterations, r.Wall.Round(time.Millisecond), r.Budget, r.Floor)
	}
	if err := r.Err(); err != nil {
		sb.WriteString("failures:\n")
		for _, l := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(&sb, "  - %s\n", l)
		}
	}
	fmt.Fprintf(&sb, "isolation: %s\n", r.Isolation)
	for _, p := range r.Recorded {
		fmt.Fprintf(&sb, "recorded %s in run 0 (the record switch selected it); every run replayed it\n", p)
	}
	if r.RecordingDiscarded != "" {
		fmt.Fprintf(&sb, "%s\n", r.RecordingDiscarded)
	}
	writeAllowlist(&sb, r.Allowlist)
	writeClasses(&sb, r.Classes)
	writeProcesses(&sb, r.Processes)
	if d := r.Divergence; d != nil {
		writeDivergence(&sb, d)
	}
	writeCauses(&sb, r.Causes)
	for i, c := range r.Classes {
		if c.ErrorKind != "" && strings.Contains(c.Error, "\n") {
			fmt.Fprintf(&sb, "\nclass %d, run %d failed (%s):\n%s\n", i+1, c.FirstRun, c.ErrorKind, c.Error)
		}
	}
	for _, l := range r.Leaks {
		fmt.Fprintf(&sb, "\nrun %d leaked %d goroutine(s):\n", l.Run, len(l.Goroutines))
		for _, g := range l.Goroutines {
			fmt.Fprintf(&sb, "%s\n\n", g.Stack)
		}
	}
	if len(r.Evidence) > 0 {
		sb.WriteString("evidence:\n")
		for _, e := range r.Evidence {
			fmt.Fprintf(&sb, "  %s: %s", e.What, e.Path)
			if e.Note != "" {
				fmt.Fprintf(&sb, "  (%s)", e.Note)
			}
			sb.WriteString("\n")
		}
	}
	if r.EvidenceError != "" {
		fmt.Fprintf(&sb, "evidence could not be written: %s\n", r.EvidenceError)
	}
	writeCommands(&sb, r)
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeCommands prints r.Commands, each with what it is for.
func writeCommands(sb *strings.Builder, r *Report) {
	for _, c := range r.Commands {
		switch c.Purpose {
		case purposeCompare:
			fmt.Fprintf(sb, "compare the two runs: %s\n", c)
		case purposeReproduce:
			fmt.Fprintf(sb, "reproduce: %s\n", c)
		case purposeReRecord:
			why := "every run missed the cassette the same way: if the requests changed on purpose"
			switch r.Classes[0].ErrorKind {
			case errorKindCassetteAbsent:
				why = "the cassette does not exist: to record it"
			case errorKindCassetteUnused:
				why = "every run left the same recorded interactions unused: if the requests changed on purpose"
			}
			fmt.Fprintf(sb, "%s, re-record it: %s\n", why, c)
		default:
			fmt.Fprintf(sb, "%s: %s\n", c.Purpose, c)
		}
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

func writeClasses(sb *strings.Builder, cs []Class) {
	if len(cs) == 0 {
		return
	}
	sb.WriteString("classes (runs with the same key, output, tape and error kind), largest first:\n")
	for i, c := range cs {
		fmt.Fprintf(sb, "  %d: %d run(s), first run %d, output %s, chain %s, %d events", i+1, c.Size, c.FirstRun, short(c.OutputDigest), short(c.ChainDigest), c.Events)
		if c.Key != "" {
			fmt.Fprintf(sb, ", key %s", c.Key[:min(16, len(c.Key))])
		}
		if c.ErrorKind != "" {
			fmt.Fprintf(sb, ", failed (%s): %s", c.ErrorKind, firstLine(c.Error))
		}
		fmt.Fprintf(sb, "; %d in the test process, %d in child processes\n", c.InProcess, len(c.Processes))
		for _, p := range c.Processes {
			fmt.Fprintf(sb, "     %s\n", p)
		}
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

func writeDivergence(sb *strings.Builder, d *Divergence) {
	fmt.Fprintf(sb, "\nclass %d (run %d) against class %d (run %d):\n", d.ClassA, d.RunA, d.ClassB, d.RunB)
	if d.RequestVaries {
		sb.WriteString("the request itself varies between runs: the nondeterminism is upstream of the recorded call; re-recording the cassette would only bake one variant into it, so fix the source\n")
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
	} else {
		sb.WriteString("output bytes are identical\n")
	}
	if d.Event != nil {
		fmt.Fprintf(sb, "event tape (a = run %d, b = run %d):\n", d.RunA, d.RunB)
		var eb strings.Builder
		_ = d.Event.Text(&eb)
		for _, l := range strings.Split(strings.TrimSuffix(eb.String(), "\n"), "\n") {
			fmt.Fprintf(sb, "  %s\n", l)
		}
	} else {
		sb.WriteString("event tapes are identical after stripping the allowlist\n")
	}
}

func writeCauses(sb *strings.Builder, c *Causes) {
	if c == nil {
		return
	}
	fmt.Fprintf(sb, "\nonly child processes differed; run %d (class %d) was made again in fresh processes:\n", c.Run, c.Class)
	switch {
	case c.FreshProcess:
		sb.WriteString("  a fresh process with nothing perturbed differs too: the outcome depends on the process itself (its pid, start time, memory addresses or state computed at start-up)\n")
	case len(c.Depends) > 0:
		fmt.Fprintf(sb, "  the outcome depends on: %s (each alone changes it)\n", strings.Join(c.Depends, "; "))
	default:
		fmt.Fprintf(sb, "  no single perturbation alone changes it (tried: %s): the combination does, or the difference is intermittent\n", strings.Join(c.Tried, ", "))
	}
	for _, f := range c.Failed {
		fmt.Fprintf(sb, "  could not try %s\n", f)
	}
}
