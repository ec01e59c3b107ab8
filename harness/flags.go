package harness

import (
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The gate flags, registered on the command line only in test binaries,
// each with an environment variable used when the flag is not given (so
// `go test ./...` can pass them to every package).
var gateFlagValues struct {
	shard, results, ledger, summary, evidence *string
}

func init() {
	if !testing.Testing() {
		return
	}
	gateFlagValues.shard = flag.String("gate.shard", "", "run only the scenarios of shard `i/n` (0 <= i < n; stable hash of the scenario name); env CODEGENIE_GATE_SHARD")
	gateFlagValues.results = flag.String("gate.results", "", "write one JSON result file per Check into `dir`, and the evidence of failing gates into dir/evidence unless -gate.evidence says where; env CODEGENIE_GATE_RESULTS")
	gateFlagValues.ledger = flag.String("gate.ledger", "", "append each verdict to the ledger at `dsn` (a file path, or postgres://... with ledger/postgres imported); env CODEGENIE_LEDGER")
	gateFlagValues.evidence = flag.String("gate.evidence", "", "keep the evidence of failing gates (bundles, reports) under `dir` (default: the evidence folder of -gate.results, else the user cache directory); env CODEGENIE_GATE_EVIDENCE")
	gateFlagValues.summary = flag.String("gate.summary", "", "write the gate summary to `file` at the end (see Main); env CODEGENIE_GATE_SUMMARY")
}

// gateConfig is the gate flags, resolved.
type gateConfig struct {
	shard   shard
	results string
	ledger  string
	summary string
	// evidence is where failing gates keep their evidence ("": the
	// default, see evidenceHome).
	evidence string
}

var (
	flagsOnce sync.Once
	gateCfg   gateConfig
	gateErr   error
)

// gateFlags returns the gate flags (flag, else environment variable).
// They are read once, after the test binary parsed its flags.
func gateFlags() (gateConfig, error) {
	flagsOnce.Do(func() {
		get := func(f *string, env string) string {
			if f != nil && *f != "" {
				return *f
			}
			//detvet:ignore a gate flag's value may come from its environment variable by design
			return os.Getenv(env)
		}
		v := gateFlagValues
		gateCfg.results = get(v.results, "CODEGENIE_GATE_RESULTS")
		gateCfg.ledger = get(v.ledger, "CODEGENIE_LEDGER")
		gateCfg.summary = get(v.summary, "CODEGENIE_GATE_SUMMARY")
		gateCfg.evidence = get(v.evidence, "CODEGENIE_GATE_EVIDENCE")
		gateCfg.shard, gateErr = parseShard(get(v.shard, "CODEGENIE_GATE_SHARD"))
	})
	return gateCfg, gateErr
}

// shard is one shard of a CI matrix; the zero shard runs everything.
type shard struct{ i, n int }

// errBadShard: a -gate.shard value is not i/n with 0 <= i < n.
var errBadShard = errors.New("bad shard")

func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return shard{}, fmt.Errorf("%w: -gate.shard (or CODEGENIE_GATE_SHARD) is %q; want i/n with 0 <= i < n, e.g. 0/4", errBadShard, s)
	}
	return shard{i, n}, nil
}

func (s shard) String() string {
	if s.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.i, s.n)
}

// skip returns why this shard does not run scenario, or "".
func (s shard) skip(scenario string) string {
	if s.n == 0 {
		return ""
	}
	if o := shardOf(scenario, s.n); o != s.i {
		return fmt.Sprintf("scenario belongs to shard %d/%d; this is shard %s", o, s.n, s)
	}
	return ""
}

// shardOf is the shard of n that runs scenario: FNV-1a (32 bits) of its
// name modulo n. It is the same on every machine, so every scenario lands
// in exactly one shard of any CI matrix.
func shardOf(scenario string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(scenario))
	return int(h.Sum32() % uint32(n))
}
