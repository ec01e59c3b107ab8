package gate

import (
	"fmt"
)

// Class is a set of runs with the same outcome: the same pin key, output
// digest, chain digest and error kind (and, for runs that missed the
// cassette, misses that mean the same changes from the recording).
//
// Its JSON names are a ledger entry's: "runs" is the class's size and
// "error" its error kind.
type Class struct {
	// Runs is the number of runs in the class; FirstRun the lowest run
	// number among them; InProcess how many were made in the test
	// process (the others were made in child processes).
	Runs      int `json:"runs"`
	FirstRun  int `json:"first_run,omitempty"`
	InProcess int `json:"in_process,omitempty"`
	// Key is the digest of the runs' pins (harness.Key).
	Key string `json:"key,omitempty"`
	// OutputDigest and ChainDigest are the runs' output digest and the
	// chain digest of their tapes (events.Digest in hex: 64 digits).
	OutputDigest string `json:"output_digest,omitempty"`
	ChainDigest  string `json:"chain_digest,omitempty"`
	// Events is the tape length of the first run.
	Events int `json:"events,omitempty"`
	// ErrorKind is "" for runs that succeeded, else the kind of their
	// error (harness.ErrorKindCassetteMiss, "panic", ...). Message is the
	// first run's error message: in full in a report, its first line in
	// a result file and a ledger entry (report.txt has the rest).
	ErrorKind string `json:"error,omitempty"`
	Message   string `json:"message,omitempty"`
}

// maxSizesListed is the number of classes whose sizes are listed one by
// one; more are summarised by size ("50 classes of 1 run").
const maxSizesListed = 8

// ClassSizes returns the sizes of o's classes (largest first) as reports
// and summaries list them: each one, or, for more than eight classes,
// each size with how many classes have it ("20", "3 classes of 2 runs").
func (o Outcome) ClassSizes() []string {
	cs := o.Classes
	var out []string
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].Runs == cs[i].Runs {
			j++
		}
		if len(cs) <= maxSizesListed || j-i == 1 {
			for k := i; k < j; k++ {
				out = append(out, fmt.Sprint(cs[k].Runs))
			}
		} else {
			runs := "runs"
			if cs[i].Runs == 1 {
				runs = "run"
			}
			out = append(out, fmt.Sprintf("%d classes of %d %s", j-i, cs[i].Runs, runs))
		}
		i = j
	}
	return out
}
