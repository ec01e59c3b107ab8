package gate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/codegenie/codegenie/internal/gateflags"
)

// Merge conditions.
var (
	// errMissingScenario: a scenario some shard knows of has no result:
	// the shard that owns it did not run or its results were not merged.
	errMissingScenario = errors.New("scenario missing from the merged results")
	// errConflict: two different results for the same scenario.
	errConflict = errors.New("conflicting results")
)

// scenarioID identifies a scenario across shards.
type scenarioID struct{ pkg, test, scenario string }

func (id scenarioID) String() string {
	return fmt.Sprintf("%s (test %s, package %s)", quoteName(id.scenario), quoteName(id.test), quoteName(id.pkg))
}

// MergeResults combines the results of the shards of one gate into the
// results an unsharded gate would have written. Results are ordered by
// scenario, then test and package, then identity (the digest of the
// result's canonical JSON without its wall time); identical results are
// kept once (of results that differ only in wall time, the fastest);
// Skipped results only say a scenario exists. It fails, naming each
// problem, when a result is malformed (errBadResult: no scenario or
// verdict, a bad shard, a negative count), when a scenario some shard
// skipped has no result (its shard is missing, or its test process
// crashed first: the CRASHED result of that shard and package is
// named), when a scenario has two different results (errConflict), or
// when the shards disagree on the number of shards; it still returns
// the results that merged. The merge of a merge is the same merge.
// Whether the merged gate passed is each result's Err.
func MergeResults(rs []Result) ([]Result, error) {
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", errBadResult, err)
		}
	}
	type keyed struct {
		Result
		id    scenarioID
		ident string
	}
	all := make([]keyed, len(rs))
	for i, r := range rs {
		all[i] = keyed{r, scenarioID{r.ImportPath, r.Test, r.Scenario}, r.identity().String()}
	}
	slices.SortFunc(all, func(a, b keyed) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Test, b.Test),
			strings.Compare(a.ImportPath, b.ImportPath), strings.Compare(a.ident, b.ident), cmp.Compare(a.Wall, b.Wall))
	})
	var errs []error
	if err := sameShardCount(rs); err != nil {
		errs = append(errs, err)
	}
	// The crashed gates by package and shard: a scenario its shard never
	// reached is missing because of the crash.
	crashes := map[[2]string]Result{}
	for _, r := range rs {
		if r.Verdict == Crashed {
			crashes[[2]string{r.ImportPath, r.Shard}] = r
		}
	}
	var out []Result
	for i := 0; i < len(all); {
		j := i
		var real []keyed
		var shards []string
		for ; j < len(all) && all[j].id == all[i].id; j++ {
			if all[j].Verdict == Skipped {
				continue
			}
			shards = append(shards, cmp.Or(all[j].Shard, "unsharded"))
			if len(real) == 0 || real[len(real)-1].ident != all[j].ident {
				real = append(real, all[j])
			}
		}
		switch {
		case len(real) == 0:
			owner, shard := "the shard that owns it", ""
			if n := shardCount(all[i].Shard); n > 0 {
				shard = fmt.Sprintf("%d/%d", gateflags.Of(all[i].Scenario, n), n)
				owner = "shard " + shard
			}
			why := "did that shard run and were its results (-gate.results) included?"
			if c, ok := crashes[[2]string{all[i].ImportPath, shard}]; ok {
				why = fmt.Sprintf("its test process crashed during scenario %s, %s, before it came to this one", quoteName(c.Scenario), printable(c.InProgress))
			}
			errs = append(errs, fmt.Errorf("%w: %s: no result from %s; %s", errMissingScenario, all[i].id, owner, why))
		case len(real) > 1:
			errs = append(errs, fmt.Errorf("%w: %s has %d different results (from shards %s); run each scenario in one shard only", errConflict, all[i].id, len(real), strings.Join(shards, ", ")))
		default:
			out = append(out, real[0].Result)
		}
		i = j
	}
	return out, errors.Join(errs...)
}

// shardCount returns n of "i/n", or 0.
func shardCount(s string) int {
	sh, err := gateflags.ParseShard(s)
	if err != nil {
		return 0
	}
	return sh.N
}

// sameShardCount checks that every sharded result comes from a matrix of
// the same size.
func sameShardCount(rs []Result) error {
	n := 0
	for _, r := range rs {
		if m := shardCount(r.Shard); m > 0 {
			if n > 0 && m != n {
				return fmt.Errorf("%w: results come from matrices of %d and %d shards; merge one matrix at a time", errConflict, n, m)
			}
			n = m
		}
	}
	return nil
}
