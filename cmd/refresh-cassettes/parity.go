package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/events"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/harness"
	"github.com/codegenie/codegenie/internal/atomicfile"
	"github.com/codegenie/codegenie/internal/excerpt"
	"github.com/codegenie/codegenie/internal/safename"
)

// errParity: a staged cassette does not replay to what its recording gave.
var errParity = errors.New("parity: a staged cassette does not replay to its recording's outcome")

// parity replays every staged cassette through the pipeline under the
// gate's own runner (harness.Config.Iterate, o.parityRuns runs) and
// requires one outcome, equal to the outcome its recording run gave. On
// failure it prints the divergence report, writes it into the review
// directory, and returns an error wrapping errParity.
func (cfg config) parity(ctx context.Context, o *options, recs []recorded, stdout io.Writer) error {
	for i, r := range recs {
		fmt.Fprintf(stdout, "refresh-cassettes: [%d/%d] %s: replaying the staged cassette %d times\n", i+1, len(recs), r.t.key, o.parityRuns)
		hc := harness.Config{
			Iterations:   o.parityRuns,
			Floor:        harness.DefaultFloor,
			ArtifactDir:  filepath.Join(o.reviewDir, "parity", safename.Of(r.t.key)),
			ReproCommand: refreshCommand(o)(r.t.file),
			Cassette:     cassettes.Options{APIKey: cfg.apiKey, Hint: refreshCommand(o)(r.t.file)},
		}
		var replayed firstOutput
		rep, err := hc.Iterate(ctx, r.t.key, cfg.replayScenario(r, &replayed))
		if rep == nil {
			return err
		}
		var why string
		switch {
		case err != nil:
			why = failedWhy(rep, err)
			dropReRecord(rep)
		case rep.OutputDigest != events.Sum(r.outcome):
			why = outcomeDiff(r.outcome, replayed.get(), rep)
		default:
			continue
		}
		var text strings.Builder
		fmt.Fprintf(&text, "%s: %s\n\n", r.t.key, why)
		rep.Text(&text)
		path := filepath.Join(o.reviewDir, "parity-"+safename.Of(r.t.key)+".txt")
		if werr := atomicfile.WriteFile(path, []byte(text.String()), 0o644); werr != nil {
			return werr
		}
		fmt.Fprintf(stdout, "refresh-cassettes: %s: the staged cassette does not replay to what was recorded; divergence report (also in %s):\n\n%s\n", r.t.key, path, text.String())
		return fmt.Errorf("%s: %w (the divergence report is above, and in %s)", r.t.key, errParity, path)
	}
	return nil
}

// replayScenario runs the fixture pipeline for r's target over the staged
// cassette, as the gate would replay it once applied.
func (cfg config) replayScenario(r recorded, first *firstOutput) harness.Scenario {
	return func(ctx context.Context, run *harness.Run) ([]byte, error) {
		client, err := run.Client(r.staged)
		if err != nil {
			return nil, err
		}
		tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: client, APIKey: cfg.apiKey})
		if err != nil {
			return nil, err
		}
		s := r.t.scenario
		res, err := tier.Run(ctx, s.Advisory, s.Repo, s.Recipe, r.t.prior)
		run.SetEvents(res.Events)
		out, err := outcome(res, err)
		if err == nil {
			first.set(out)
		}
		return out, err
	}
}

// firstOutput keeps the output of the first run that gave one.
type firstOutput struct {
	mu  sync.Mutex
	out []byte
	ok  bool
}

func (f *firstOutput) set(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ok {
		f.out, f.ok = b, true
	}
}

// failedWhy says why replays that did not pass refuse the cassette.
func failedWhy(rep *harness.Report, err error) string {
	switch {
	case rep.Verdict == harness.Broken && len(rep.Classes) > 0 && rep.Classes[0].ErrorKind == harness.ErrorKindCassetteMiss:
		return "every replay missed the staged cassette: the pipeline's request varies between recording and replay " +
			"(the nearest recorded request and the fields that differ are below). Make the request deterministic; " +
			"re-recording would only bake in one variant"
	case rep.Verdict == harness.Nondeterministic:
		return "the replays of the staged cassette disagree with each other (the classes and the first divergence are below)"
	}
	return "the replays of the staged cassette fail: " + err.Error()
}

// dropReRecord removes the re-record command from rep: the cassette was
// just recorded, so recording it again cannot make its replays agree.
func dropReRecord(rep *harness.Report) {
	kept := rep.Commands[:0]
	for _, c := range rep.Commands {
		if c.String() != rep.ReRecordCommand {
			kept = append(kept, c)
		}
	}
	rep.Commands, rep.ReRecordCommand = kept, ""
}

func (f *firstOutput) get() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out
}

// outcomeDiff says where the replays' common outcome first differs from
// the recording's.
func outcomeDiff(recorded, replayed []byte, rep *harness.Report) string {
	off, _ := excerpt.FirstDiff(recorded, replayed)
	return fmt.Sprintf("all %d replays gave one outcome (digest %s, %d bytes), but not the recording's (digest %s, %d bytes): they differ first at byte %d:\n  recorded: %s\n  replayed: %s",
		rep.Runs, rep.OutputDigest, len(replayed), events.Sum(recorded), len(recorded), off,
		excerpt.Around(recorded, off, excerpt.Radius), excerpt.Around(replayed, off, excerpt.Radius))
}
