package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/internal/manifest"
)

// config is what main injects: the key from the environment, the
// transport that reaches the API, the clock for recording times and for
// judging ages, and where a review directory is made when -review is not
// given (os.TempDir() when empty).
type config struct {
	apiKey     string
	transport  http.RoundTripper
	now        func() time.Time
	reviewRoot string
	// afterRecord (tests only) may change a staged cassette after it was
	// recorded, before it is reviewed and proven.
	afterRecord func(staged string) error
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// target is one cassette to record.
type target struct {
	key      string // "scenario/path"
	file     string // cassetteFile
	scenario fixtures.Scenario
	prior    []fallback.AttemptSummary
}

// cassetteFile is the cassette file of one path ("happy", "retry") of one
// fixture scenario: "<scenario>.<path>.yaml".
func cassetteFile(scenario, path string) string { return scenario + "." + path + ".yaml" }

// Paths of a scenario: the happy path, and the retry-bypass path when the
// scenario has prior attempts.
func targets() []target {
	var out []target
	for _, s := range fixtures.Scenarios() {
		out = append(out, target{key: s.Name + "/" + fallback.PathHappy, file: cassetteFile(s.Name, fallback.PathHappy), scenario: s})
		if len(s.Prior) > 0 {
			out = append(out, target{key: s.Name + "/" + fallback.PathRetry, file: cassetteFile(s.Name, fallback.PathRetry), scenario: s, prior: s.Prior})
		}
	}
	return out
}

func (cfg config) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	o, err := parseFlags(args)
	if h := (*helpRequested)(nil); errors.As(err, &h) {
		_, err = io.WriteString(stdout, h.text)
		return err
	}
	if err != nil {
		return err
	}
	if o.recover {
		if err := cassettes.Recover(o.dir); err != nil {
			return fmt.Errorf("-recover: %w", err)
		}
		if err := cassettes.Verify(o.dir, cassettes.VerifyOptions{Now: cfg.now, Warn: stdout, Refresh: refreshCommand(o)}); err != nil {
			return fmt.Errorf("-recover: no refresh of %s is left unfinished, but the directory does not verify:\n%w", o.dir, err)
		}
		fmt.Fprintf(stdout, "refresh-cassettes: %s is consistent: no refresh is left unfinished, and every cassette matches the manifest\n", o.dir)
		return nil
	}
	man, err := manifest.Read(filepath.Join(o.dir, manifest.Name))
	if errors.Is(err, fs.ErrNotExist) {
		man, err = &manifest.Manifest{Format: manifest.Format}, nil
	}
	if err != nil {
		return err
	}
	selected, err := cfg.selectTargets(o, stdout)
	if err != nil || len(selected) == 0 {
		return err
	}
	if o.dryRun {
		dryRun(o, selected, man, stdout)
		return nil
	}
	if cfg.apiKey == "" {
		return errors.New("ANTHROPIC_API_KEY is not set: export the key to record with (it is sent to the API only and never written to a cassette)")
	}
	// One refresh of a directory at a time, from recording to applying.
	lock, err := cassettes.LockDir(ctx, o.dir)
	if err != nil {
		return err
	}
	defer func() {
		// Removes the staging folder if nothing was applied.
		if uerr := lock.Unlock(); uerr != nil && err == nil {
			err = uerr
		}
	}()
	if err := lock.Recover(); err != nil {
		return err
	}
	stage, err := lock.NewStage()
	if err != nil {
		return err
	}

	recs, err := cfg.recordAll(ctx, o, selected, stage, stdout)
	if err != nil {
		return err
	}
	rev, err := cfg.writeReview(ctx, o, stage, recs, stdout)
	if err != nil {
		return err
	}
	if o.check {
		if rev.Drifted {
			return fmt.Errorf("%w: see the review above; nothing was applied to %s", errDrifted, o.dir)
		}
		fmt.Fprintf(stdout, "refresh-cassettes: -check: nothing drifted; nothing was applied to %s\n", o.dir)
		return nil
	}
	for _, r := range recs {
		if e, ok := man.Lookup(r.t.file); ok && e.Pinned && e.Digest != r.digest && !o.force {
			return fmt.Errorf("%s: %w: %s changed (digest %s -> %s) and a golden digest depends on it; re-run with -force -reason 'why'\nnothing was changed in %s",
				r.t.key, manifest.ErrPinned, r.t.file, e.Digest, r.digest, o.dir)
		}
	}
	if err := cfg.parity(ctx, o, recs, stdout); err != nil {
		return fmt.Errorf("%w\nnothing was changed in %s", err, o.dir)
	}
	var updates []cassettes.Update
	for _, r := range recs {
		updates = append(updates, cassettes.Update{File: r.t.file, Staged: r.staged, Force: o.force, Reason: o.reason, RecordedAt: r.at})
	}
	// Staged through lock, so applied under it.
	if err := cassettes.Apply(o.dir, updates, cfg.now().UTC().Format(time.RFC3339)); err != nil {
		return applyError(err, o.dir)
	}
	summary(o, rev, stdout)
	return nil
}

// applyError is the error of a failed Apply. An ErrInterruptedApply says
// itself what was changed and what the recovery command will do; any
// other failure came before anything was moved.
func applyError(err error, dir string) error {
	if errors.Is(err, cassettes.ErrInterruptedApply) {
		return err
	}
	return fmt.Errorf("%w\nnothing was changed in %s", err, dir)
}

// record runs one scenario path through the fixture tier with a recording
// cassette, saves it at path, and returns the recording run's outcome.
func (cfg config) record(ctx context.Context, t target, path string, rt http.RoundTripper, stdout io.Writer) ([]byte, error) {
	c, err := cassettes.Open(path, cassettes.Options{Mode: cassettes.Record, RealTransport: rt, APIKey: cfg.apiKey})
	if err != nil {
		return nil, err
	}
	tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: c.Client(), APIKey: cfg.apiKey})
	if err != nil {
		return nil, err
	}
	s := t.scenario
	res, tierErr := tier.Run(ctx, s.Advisory, s.Repo, s.Recipe, t.prior)
	out, err := outcome(res, tierErr)
	if err != nil {
		c.Close() // nothing is committed: the staging directory is removed
		return nil, fmt.Errorf("running the pipeline: %w", err)
	}
	if err == nil && tierErr != nil {
		// The API answered and the pipeline rejected the answer: that is
		// an outcome the gate replays, so the cassette is kept.
		fmt.Fprintf(stdout, "refresh-cassettes: %s: note: the pipeline rejected the answer (%s); recorded anyway\n", t.key, out)
	}
	return out, c.Close()
}

// outcome is what a run of the pipeline gave, as the gate compares it:
// the transform's diff, or the pipeline's rejection of the answer. Any
// other error is returned.
func outcome(res fallback.Result, err error) ([]byte, error) {
	switch {
	case err == nil:
		return res.Transform.DiffBytes, nil
	case errors.Is(err, fallback.ErrUnusableCompletion):
		return []byte("rejected: " + err.Error()), nil
	}
	return nil, err
}
