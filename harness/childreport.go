package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/tape"
)

// readChildReport reads and checks the report a child wrote for spec: at
// most maxChildReport bytes of strict JSON of the right format, for the
// right test, scenario, run and nonce. A missing file is an error wrapping
// os.ErrNotExist.
func readChildReport(path string, spec *childSpec) (*childReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxChildReport+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxChildReport {
		return nil, fmt.Errorf("report %s is over %d bytes", path, maxChildReport)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rep childReport
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("report %s: data after the JSON value", path)
	}
	switch {
	case rep.Format != childReportFormat:
		return nil, fmt.Errorf("report %s: format %q, want %q", path, rep.Format, childReportFormat)
	case rep.Nonce != spec.Nonce || rep.Test != spec.Test || rep.Scenario != spec.Scenario || rep.Run != spec.Run:
		return nil, fmt.Errorf("report %s is for test %q scenario %q run %d, not test %q scenario %q run %d (or its nonce differs)",
			path, rep.Test, rep.Scenario, rep.Run, spec.Test, spec.Scenario, spec.Run)
	case rep.Error == "" && rep.ErrorKind != "", rep.Error != "" && !knownErrorKind(rep.ErrorKind):
		return nil, fmt.Errorf("report %s: error kind %q does not go with error %q", path, rep.ErrorKind, firstLine(rep.Error))
	}
	return &rep, nil
}

// knownErrorKind reports whether k is an error kind the harness gives.
func knownErrorKind(k string) bool {
	switch k {
	case ErrorKindCassetteMiss, errorKindCassetteUnused, errorKindCassetteAbsent, errorKindCassette, errorKindPanic, errorKindDeadlock,
		errorKindLeak, errorKindCanceled, errorKindChild, errorKindPin, errorKindHung:
		return true
	}
	return strings.HasPrefix(k, errorKindError+" (") && strings.HasSuffix(k, ")") && len(k) < 512
}

// fillFromReport sets o from a child's report.
func fillFromReport(o *outcome, rep *childReport) error {
	evs, err := tape.Read(rep.Tape)
	if err != nil {
		return fmt.Errorf("tape: %w", err)
	}
	o.output, o.tape, o.pin, o.requests = rep.Output, evs, rep.Pin, rep.Requests
	o.errText, o.errKind, o.leaks = rep.Error, rep.ErrorKind, rep.Leaks
	if o.errKind == errorKindLeak && len(o.leaks) == 0 {
		return fmt.Errorf("a leak without goroutines")
	}
	p := rep.Observed
	p.Run = o.iter
	o.proc = &p
	return nil
}

// readTestLog returns the environment variables a test binary logged as
// read with -test.testlogfile ("getenv NAME" lines), sorted, once each.
func readTestLog(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	for sc.Scan() {
		if k, ok := strings.CutPrefix(sc.Text(), "getenv "); ok && k != "" {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
