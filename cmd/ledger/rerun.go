package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"

	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/ledgerdb"
	"github.com/codegenie/codegenie/ledger"
)

// reportFormat marks a file rerun -output wrote; rerun replaces no
// other file.
const reportFormat = "codegenie-ledger-rerun/1"

type reportFile struct {
	Format string `json:"format"`
	*ledger.RerunReport
}

func (a app) rerun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := a.flags("rerun")
	from := f.Uint64("from", 0, "first seq to rerun (required)")
	to := f.Uint64("to", 0, "last seq to rerun (default: the head)")
	strict := f.Bool("strict", false, "exit 1 when an entry diverged or could not be rerun")
	output := f.String("output", "", "also write the report as JSON to `file`")
	dir := f.String("dir", ".", "the module whose code reruns the entries")
	revision := f.String("revision", "", "the current code revision to record (default: the build's, else git's)")
	ciJob := f.String("ci-job", "", "the CI job identity to record (default: from the CI's environment)")
	if err := f.parse(args); err != nil {
		return err
	}
	if *from == 0 {
		return usagef("rerun: give -from N (seqs start at 1)")
	}
	if *to != 0 && *to < *from {
		return usagef("rerun: -to %d is before -from %d", *to, *from)
	}
	if *output != "" {
		if err := checkReplaceable(*output); err != nil {
			return err
		}
	}
	s, err := a.open(ctx, f)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.Rerun(ctx, ledger.RerunConfig{
		From: *from, To: *to, Evaluate: a.evaluator(*dir, stderr),
		Revision: cmp.Or(*revision, a.revision(ctx, *dir)),
		CIJob:    cmp.Or(*ciJob, ledgerdb.CIJob(a.getenv)),
	})
	if err != nil {
		return err
	}
	if err := rep.Text(stdout); err != nil {
		return err
	}
	if *output != "" {
		b, err := json.MarshalIndent(reportFile{Format: reportFormat, RerunReport: rep}, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(*output, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *strict {
		return rep.Err()
	}
	return nil
}

// checkReplaceable refuses to overwrite a file that is not a rerun report.
func checkReplaceable(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var probe struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(b, &probe) != nil || probe.Format != reportFormat {
		return fmt.Errorf("rerun: -output %s exists and is not a rerun report; give another path or remove it", path)
	}
	return nil
}

// gitRevision is the revision of the running build, else of the git
// checkout at dir ("+dirty" when it has changes), else "".
func gitRevision(ctx context.Context, dir string) string {
	if r := ledgerdb.BuildRevision(); r != "" {
		return r
	}
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += "+dirty"
	}
	return rev
}
