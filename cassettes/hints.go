package cassettes

import (
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/codegenie/codegenie/internal/hint"
)

// The record switch: flags of test binaries only (see the package
// documentation, Recording).
var (
	recordFlag        = new(string)
	recordMissingFlag = new(bool)
)

// RecordFlag and recordMissingName are the names of the test flags that
// make Open record.
const (
	RecordFlag        = "cassettes.record"
	recordMissingName = "cassettes.record-missing"
)

func init() {
	if testing.Testing() {
		recordFlag = flag.String(RecordFlag, "", "re-record the cassettes whose path matches `regexp` (against Config.RealTransport, or the live API)")
		recordMissingFlag = flag.Bool(recordMissingName, false, "record the cassettes that do not exist yet; replay the others")
	}
}

// modeFor is the mode Open uses for path: m, unless m is Replay and a test
// flag selects the cassette for recording.
func modeFor(path string, m Mode) (Mode, error) {
	if m != Replay {
		return m, nil
	}
	if *recordFlag != "" {
		re, err := regexp.Compile(*recordFlag)
		if err != nil {
			return 0, fmt.Errorf("invalid -%s flag: %v", RecordFlag, err)
		}
		if re.MatchString(filepath.ToSlash(path)) {
			return Record, nil
		}
	}
	if *recordMissingFlag && !exists(path) {
		return Record, nil
	}
	return Replay, nil
}

// rerecordHint is the command errors name to re-record the cassette at
// path: rerecordCommand, else a description of the go test command that
// re-records it.
func rerecordHint(path string, cfg Config) string {
	if c := rerecordCommand(path, cfg); c != "" {
		return c
	}
	return "the go test command of the test that opens " + filepath.Base(path) + ", with " + hint.Quote(recordSelector(path)) + ", in that test's package"
}

// rerecordCommand is the command that re-records the cassette at path:
// Config.Hint, or the go test line that re-records it from the test
// that opened it (OpenT); "" when neither is known. A miss and unused
// interactions name it only then: a caller that opened the cassette
// with Open and no Hint tells its own (a determinism gate does, and only
// when recording again is the answer).
func rerecordCommand(path string, cfg Config) string {
	if cfg.Hint != "" {
		return cfg.Hint
	}
	if cfg.testName != "" {
		return hint.GoTest(cfg.testName, false, recordSelector(path))
	}
	return ""
}

// recordSelector is the record switch that selects the cassette at path.
func recordSelector(path string) string {
	return "-" + RecordFlag + "=" + regexp.QuoteMeta(filepath.Base(path)) + "$"
}

// realTransport is what recording sends requests through.
func realTransport(cfg Config) http.RoundTripper {
	if cfg.RealTransport != nil {
		return cfg.RealTransport
	}
	return http.DefaultTransport
}
