package gateflags

import (
	"flag"
	"os"
	"sync"
	"testing"
)

// The flags' values, registered on the command line only in test
// binaries.
var values struct {
	shard, results, ledger, summary, evidence *string
}

func init() {
	if !testing.Testing() {
		return
	}
	values.shard = flag.String("gate.shard", "", "run only the scenarios of shard `i/n` (0 <= i < n; stable hash of the scenario name); env "+envShard)
	values.results = flag.String("gate.results", "", "write one JSON result file per Check into `dir`, and the evidence of failing gates into dir/evidence unless -gate.evidence says where; env "+envResults)
	values.ledger = flag.String("gate.ledger", "", "not read by a test process: append the verdicts of a -gate.results folder with "+AppendCommand)
	values.evidence = flag.String("gate.evidence", "", "keep the evidence of failing gates (bundles, reports) under `dir` (default: the evidence folder of -gate.results, else the user cache directory); env "+envEvidence)
	values.summary = flag.String("gate.summary", "", "write the gate summary to `file` at the end (harness.Main); env "+envSummary)
}

// The environment variables of the flags.
const (
	envShard    = "CODEGENIE_GATE_SHARD"
	envResults  = "CODEGENIE_GATE_RESULTS"
	envEvidence = "CODEGENIE_GATE_EVIDENCE"
	envSummary  = "CODEGENIE_GATE_SUMMARY"
	// EnvLedger is the DSN of the ledger command and the CI recipes'
	// merge job; a test process does not read it.
	EnvLedger = "CODEGENIE_LEDGER"
)

// AppendCommand is how the verdicts of a results folder reach a ledger.
const AppendCommand = "go run github.com/codegenie/codegenie/cmd/gate-merge -ledger DSN RESULTS_DIR"

// Settings are the gate's settings of this process.
type Settings struct {
	// Shard is the shard this process runs (the zero Shard: all).
	Shard Shard
	// Results is the folder result files are written to ("": none).
	Results string
	// Summary is the file harness.Main writes the summary to ("": none).
	Summary string
	// Evidence is where failing gates keep their evidence ("": the
	// default).
	Evidence string
	// Ledger is the -gate.ledger flag, which a test process refuses.
	Ledger string
}

var (
	once     sync.Once
	settings Settings
	err      error
)

// Get returns the settings (each flag, else its environment variable),
// read once, after the test binary parsed its flags. The error is a bad
// shard.
func Get() (Settings, error) {
	once.Do(func() {
		get := func(f *string, env string) string {
			if f != nil && *f != "" {
				return *f
			}
			//detvet:ignore a gate flag's value may come from its environment variable by design
			return os.Getenv(env)
		}
		v := values
		settings.Results = get(v.results, envResults)
		settings.Summary = get(v.summary, envSummary)
		settings.Evidence = get(v.evidence, envEvidence)
		if v.ledger != nil {
			settings.Ledger = *v.ledger
		}
		settings.Shard, err = ParseShard(get(v.shard, envShard))
	})
	return settings, err
}
