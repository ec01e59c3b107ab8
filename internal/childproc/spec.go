package childproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/codegenie/codegenie/internal/atomicfile"
)

// specVar is the environment variable that makes a test binary a child
// of a gate: it holds the JSON of a Spec.
const specVar = "CODEGENIE_HARNESS_CHILD"

// markVar marks the processes of one child: its environment holds the
// spec's nonce there, and so does every process it starts that keeps
// its environment, whatever session or group it moves to.
const markVar = "CODEGENIE_HARNESS_CHILD_MARK"

// Format names of the child protocol.
const (
	specFormat   = "codegenie-harness-child-spec/1"
	reportFormat = "codegenie-harness-child-report/1"
)

// maxReport bounds the report a child may write.
const maxReport = 256 << 20

// Spec tells a child process which run to make and where to put its
// report.
type Spec struct {
	Format   string `json:"format"`
	Test     string `json:"test"`
	Scenario string `json:"scenario"`
	Run      int    `json:"run"`
	Procs    int    `json:"procs"`
	Out      string `json:"out"`
	Nonce    string `json:"nonce"`
	// Hostname and Domain are set when the child was started in a new UTS
	// namespace; UTS is the test process's namespace, so a child that
	// finds itself still in it never renames the machine.
	Hostname string `json:"hostname,omitempty"`
	Domain   string `json:"domain,omitempty"`
	UTS      string `json:"uts,omitempty"`
}

var (
	selfOnce sync.Once
	self     *Spec
	selfErr  error
)

// Self returns the spec this process was started with as a child of a
// gate, nil when it was not.
func Self() (*Spec, error) {
	selfOnce.Do(func() {
		//detvet:ignore the child's spec comes in its environment
		raw, ok := os.LookupEnv(specVar)
		if !ok {
			return
		}
		var s Spec
		if err := json.Unmarshal([]byte(raw), &s); err != nil || s.Format != specFormat {
			selfErr = fmt.Errorf("harness: %s is set but is not a child spec of format %s (%v); unset it", specVar, specFormat, err)
			return
		}
		self = &s
	})
	return self, selfErr
}

// Header is the start of every report: the format, and the nonce, test,
// scenario and run of the spec the child was given.
type Header struct {
	Format   string `json:"format"`
	Nonce    string `json:"nonce"`
	Test     string `json:"test"`
	Scenario string `json:"scenario"`
	Run      int    `json:"run"`
}

func (h *Header) header() *Header { return h }

// Report is the report a child writes: a pointer to a struct that embeds
// [Header] (its fields come first in the JSON) and holds what the run
// gave. Check verifies that content once the header matched the spec.
type Report interface {
	header() *Header
	Check() error
}

// Header returns the header of the report for s.
func (s *Spec) Header() Header {
	return Header{Format: reportFormat, Nonce: s.Nonce, Test: s.Test, Scenario: s.Scenario, Run: s.Run}
}

// WriteReport writes the child's report, the JSON of a [Report],
// atomically where the parent reads it.
func (s *Spec) WriteReport(js []byte) error {
	return atomicfile.WriteFile(s.Out, js, 0o600)
}

// readReport reads the report a child wrote for spec into rep, checking
// it strictly: at most limit bytes (maxReport), one JSON value with no unknown
// field, of the right format, for the right test, scenario, run and
// nonce. A missing file is an error wrapping os.ErrNotExist. The content
// is not checked (see Report.Check).
func readReport(path string, limit int, spec *Spec, rep Report) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > limit {
		return fmt.Errorf("report %s is over %d bytes", path, limit)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(rep); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if dec.More() {
		return fmt.Errorf("report %s: data after the JSON value", path)
	}
	h := rep.header()
	switch {
	case h.Format != reportFormat:
		return fmt.Errorf("report %s: format %q, want %q", path, h.Format, reportFormat)
	case h.Nonce != spec.Nonce || h.Test != spec.Test || h.Scenario != spec.Scenario || h.Run != spec.Run:
		return fmt.Errorf("report %s is for test %q scenario %q run %d, not test %q scenario %q run %d (or its nonce differs)",
			path, h.Test, h.Scenario, h.Run, spec.Test, spec.Scenario, spec.Run)
	}
	return nil
}

// errNotNewUTS: the child was asked for a hostname but is still in the
// test process's UTS namespace.
var errNotNewUTS = errors.New("not in a new UTS namespace")
