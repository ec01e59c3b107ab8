package harness

import (
	"flag"
	"strconv"
	"time"

	"github.com/codegenie/codegenie/internal/childproc"
)

// shuffleTests puts go test's -test.shuffle in force with a seed of its
// own when the command line did not set it (and gives "on" a seed of its
// own), so the tests of a package, and the scenarios they gate, run in an
// order that differs from one go test to the next: state one scenario
// leaves for the next shows whatever ran before it. The seed is printed
// by go test ("-test.shuffle N") and named in every report; go test
// -shuffle=N runs the same order again, -shuffle=off the source order.
// Child processes run their one scenario alone and shuffle nothing.
func shuffleTests() {
	f := flag.Lookup("test.shuffle")
	if f == nil {
		return
	}
	if spec, _ := childproc.Self(); spec != nil {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(g *flag.Flag) { set = set || g.Name == f.Name })
	if set && f.Value.String() != "on" {
		return
	}
	_ = f.Value.Set(strconv.FormatInt(time.Now().UnixNano(), 10))
}

// orderNote says in what order the tests of this process run, for a
// report: "" unless go test shuffles them.
func orderNote() string {
	f := flag.Lookup("test.shuffle")
	if f == nil || f.Value.String() == "off" {
		return ""
	}
	return "; tests shuffled with -test.shuffle=" + f.Value.String() + " (go test -shuffle=" + f.Value.String() + " runs them in this order again; each child process runs its scenario alone)"
}
