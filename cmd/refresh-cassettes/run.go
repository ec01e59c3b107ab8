package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/fallback"
	"github.com/codegenie/codegenie/fixtures"
	"github.com/codegenie/codegenie/llm"
)

// config is what main injects: the key from the environment, the
// transport that reaches the API, and the clock for manifest history.
type config struct {
	apiKey    string
	transport http.RoundTripper
	now       func() time.Time
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// target is one cassette to record.
type target struct {
	key      string // "scenario/path"
	file     string // cassettes.FileName
	scenario fixtures.Scenario
	prior    []fallback.AttemptSummary
}

// Paths of a scenario: the happy path, and the retry-bypass path when the
// scenario has prior attempts.
func targets() []target {
	var out []target
	for _, s := range fixtures.Scenarios() {
		out = append(out, target{key: s.Name + "/" + fallback.PathHappy, file: cassettes.FileName(s.Name, fallback.PathHappy), scenario: s})
		if len(s.Prior) > 0 {
			out = append(out, target{key: s.Name + "/" + fallback.PathRetry, file: cassettes.FileName(s.Name, fallback.PathRetry), scenario: s, prior: s.Prior})
		}
	}
	return out
}

func (cfg config) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("refresh-cassettes", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	runRE := fl.String("run", "", "record only cassettes whose scenario/path matches this regexp")
	baseURL := fl.String("base-url", llm.DefaultAnthropicBaseURL, "API root to record against")
	dir := fl.String("dir", filepath.Join("cassettes", "testdata"), "cassette directory")
	dryRun := fl.Bool("dry-run", false, "list what would be re-recorded")
	force := fl.Bool("force", false, "allow replacing pinned cassettes (needs -reason)")
	reason := fl.String("reason", "", "why pinned cassettes change (kept in the manifest history)")
	recoverOnly := fl.Bool("recover", false, "finish or discard what a killed refresh left in -dir, and exit")
	if err := fl.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if fl.NArg() > 0 {
		return usagef("unexpected arguments %q", fl.Args())
	}
	if *recoverOnly {
		if err := cassettes.Recover(*dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "refresh-cassettes: %s is consistent\n", *dir)
		return cassettes.Verify(*dir)
	}
	re, err := regexp.Compile(*runRE)
	if err != nil {
		return usagef("-run: %v", err)
	}
	if *force && strings.TrimSpace(*reason) == "" {
		return usagef("-force needs -reason 'why the pinned cassettes change'")
	}
	base, err := url.Parse(*baseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return usagef("-base-url %q is not an absolute http(s) URL", *baseURL)
	}
	def, _ := url.Parse(llm.DefaultAnthropicBaseURL)

	var selected []target
	var names []string
	for _, t := range targets() {
		names = append(names, t.key)
		if re.MatchString(t.key) {
			selected = append(selected, t)
		}
	}
	if len(selected) == 0 {
		return usagef("-run %q matches no cassette; there are: %s", *runRE, strings.Join(names, ", "))
	}

	manifest, err := cassettes.ReadManifest(filepath.Join(*dir, cassettes.ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		manifest, err = &cassettes.Manifest{Format: cassettes.ManifestFormat}, nil
	}
	if err != nil {
		return err
	}

	if *dryRun {
		fmt.Fprintf(stdout, "refresh-cassettes: would record %d cassettes into %s against %s:\n", len(selected), *dir, *baseURL)
		for _, t := range selected {
			state := "new"
			if e, ok := manifest.Lookup(t.file); ok {
				state = "exists, digest " + e.Digest
				if e.Pinned {
					state += ", pinned (a change needs -force -reason)"
				}
			}
			fmt.Fprintf(stdout, "  %-28s %s (%s)\n", t.key, t.file, state)
		}
		return nil
	}
	if cfg.apiKey == "" {
		return errors.New("ANTHROPIC_API_KEY is not set: export the key to record with (it is sent to the API only and never written to a cassette)")
	}
	if err := cassettes.Recover(*dir); err != nil {
		return err
	}
	stage, err := cassettes.NewStage(*dir)
	if err != nil {
		return err
	}
	defer cassettes.Recover(*dir) // discards the staging folder if nothing was applied

	rt := cfg.transport
	if *base != *def {
		if rt, err = cassettes.Redirect(def.String(), base.String(), rt); err != nil {
			return usagef("-base-url: %v", err)
		}
	}
	var updates []cassettes.Update
	var changes []*cassettes.Change
	for i, t := range selected {
		fmt.Fprintf(stdout, "refresh-cassettes: [%d/%d] %s: recording %s\n", i+1, len(selected), t.key, t.file)
		staged := filepath.Join(stage, t.file)
		if err := cfg.record(ctx, t, staged, rt, stdout); err != nil {
			return fmt.Errorf("%s: %w\nnothing was changed in %s", t.key, err, *dir)
		}
		ch, err := cassettes.Compare(filepath.Join(*dir, t.file), staged)
		if err != nil {
			return err
		}
		state := "new"
		switch {
		case ch.OldDigest == ch.NewDigest:
			state = "unchanged"
		case ch.OldDigest != "":
			state = "changed"
		}
		fmt.Fprintf(stdout, "refresh-cassettes: [%d/%d] %s: recorded %d interactions (%s)\n", i+1, len(selected), t.key, ch.NewInteractions, state)
		if e, ok := manifest.Lookup(t.file); ok && e.Pinned && e.Digest != ch.NewDigest && !*force {
			return fmt.Errorf("%s: %w: %s changed (digest %s -> %s) and a golden digest depends on it; re-run with -force -reason 'why'\nnothing was changed in %s",
				t.key, cassettes.ErrPinned, t.file, e.Digest, ch.NewDigest, *dir)
		}
		updates = append(updates, cassettes.Update{File: t.file, Staged: staged, Force: *force, Reason: *reason})
		changes = append(changes, ch)
	}
	if _, err := cassettes.Apply(*dir, updates, cfg.now().UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("%w\nnothing was changed in %s", err, *dir)
	}

	changed := 0
	fmt.Fprintln(stdout, "refresh-cassettes: summary:")
	for i, ch := range changes {
		t := selected[i]
		if ch.OldDigest == ch.NewDigest {
			fmt.Fprintf(stdout, "  %s: unchanged (%d interactions, digest %s)\n", t.key, ch.NewInteractions, ch.NewDigest)
			continue
		}
		changed++
		if ch.OldDigest == "" {
			fmt.Fprintf(stdout, "  %s: new: %d interactions, model %s, tokens in %d out %d, digest %s\n",
				t.key, ch.NewInteractions, ch.Model, ch.NewUsage.InputTokens, ch.NewUsage.OutputTokens, ch.NewDigest)
			continue
		}
		text := "response text unchanged"
		if ch.TextChanged {
			text = "response text CHANGED"
		}
		fmt.Fprintf(stdout, "  %s: changed: %d added, %d removed, %d changed, %d same; %s; model %s; tokens in %d -> %d, out %d -> %d; digest %s -> %s\n",
			t.key, ch.Added, ch.Removed, ch.Changed, ch.Same, text, ch.Model,
			ch.OldUsage.InputTokens, ch.NewUsage.InputTokens, ch.OldUsage.OutputTokens, ch.NewUsage.OutputTokens,
			ch.OldDigest, ch.NewDigest)
	}
	if changed > 0 {
		fmt.Fprintf(stdout, "refresh-cassettes: %d cassettes changed. Refresh the golden digests that pin them:\n\tgo test ./properties/ -run Golden -update\nthen review the diff and commit %s (cassettes and %s) with the goldens.\n",
			changed, *dir, cassettes.ManifestName)
	} else {
		fmt.Fprintln(stdout, "refresh-cassettes: no cassette changed; the goldens stay valid.")
	}
	return nil
}

// record runs one scenario path through the fixture tier with a recording
// cassette and saves it at path.
func (cfg config) record(ctx context.Context, t target, path string, rt http.RoundTripper, stdout io.Writer) error {
	c, err := cassettes.Open(path, cassettes.Options{Mode: cassettes.Record, RealTransport: rt, APIKey: cfg.apiKey})
	if err != nil {
		return err
	}
	tier, err := fixtures.NewTier(fixtures.TierConfig{HTTPClient: c.Client(), APIKey: cfg.apiKey})
	if err != nil {
		return err
	}
	s := t.scenario
	_, err = tier.Run(ctx, s.Advisory, s.Repo, s.Recipe, t.prior)
	if err != nil && !errors.Is(err, fallback.ErrUnusableCompletion) {
		c.Close() // nothing is committed: the staging directory is removed
		return fmt.Errorf("running the pipeline: %w", err)
	}
	if err != nil {
		// The API answered and the pipeline rejected the answer: that is
		// an outcome the gate replays, so the cassette is kept.
		fmt.Fprintf(stdout, "refresh-cassettes: %s: note: the pipeline rejected the answer (%v); recorded anyway\n", t.key, err)
	}
	return c.Close()
}
