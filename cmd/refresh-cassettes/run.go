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

// flags are the command's parsed arguments.
type flags struct {
	run, dir, reason  string
	base              *url.URL
	dryRun, force, rc bool
	selected          []target
}

func parseFlags(args []string) (*flags, error) {
	fl := flag.NewFlagSet("refresh-cassettes", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	var f flags
	fl.StringVar(&f.run, "run", "", "record only cassettes whose scenario/path matches this regexp")
	baseURL := fl.String("base-url", llm.DefaultAnthropicBaseURL, "API root to record against")
	fl.StringVar(&f.dir, "dir", filepath.Join("cassettes", "testdata"), "cassette directory")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would be re-recorded")
	fl.BoolVar(&f.force, "force", false, "allow replacing pinned cassettes (needs -reason)")
	fl.StringVar(&f.reason, "reason", "", "why pinned cassettes change (kept in the manifest history)")
	fl.BoolVar(&f.rc, "recover", false, "finish or discard what a killed refresh left in -dir, and exit")
	if err := fl.Parse(args); err != nil {
		return nil, usagef("%v", err)
	}
	if fl.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fl.Args())
	}
	if f.rc {
		return &f, nil
	}
	re, err := regexp.Compile(f.run)
	if err != nil {
		return nil, usagef("-run: %v", err)
	}
	if f.force && strings.TrimSpace(f.reason) == "" {
		return nil, usagef("-force needs -reason 'why the pinned cassettes change'")
	}
	f.base, err = url.Parse(*baseURL)
	if err != nil || (f.base.Scheme != "http" && f.base.Scheme != "https") || f.base.Host == "" {
		return nil, usagef("-base-url %q is not an absolute http(s) URL", *baseURL)
	}
	var names []string
	for _, t := range targets() {
		names = append(names, t.key)
		if re.MatchString(t.key) {
			f.selected = append(f.selected, t)
		}
	}
	if len(f.selected) == 0 {
		return nil, usagef("-run %q matches no cassette; there are: %s", f.run, strings.Join(names, ", "))
	}
	return &f, nil
}

func (cfg config) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	if f.rc {
		if err := cassettes.Recover(f.dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "refresh-cassettes: %s is consistent\n", f.dir)
		return cassettes.Verify(f.dir)
	}
	manifest, err := cassettes.ReadManifest(filepath.Join(f.dir, cassettes.ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		manifest, err = &cassettes.Manifest{Format: cassettes.ManifestFormat}, nil
	}
	if err != nil {
		return err
	}
	if f.dryRun {
		dryRun(stdout, f, manifest)
		return nil
	}
	if cfg.apiKey == "" {
		return errors.New("ANTHROPIC_API_KEY is not set: export the key to record with (it is sent to the API only and never written to a cassette)")
	}
	changes, err := cfg.recordAll(ctx, f, manifest, stdout)
	if err != nil {
		return err
	}
	summary(stdout, f, changes)
	return nil
}

func dryRun(stdout io.Writer, f *flags, manifest *cassettes.Manifest) {
	fmt.Fprintf(stdout, "refresh-cassettes: would record %d cassettes into %s against %s:\n", len(f.selected), f.dir, f.base)
	for _, t := range f.selected {
		state := "new"
		if e, ok := manifest.Lookup(t.file); ok {
			state = "exists, digest " + e.Digest
			if e.Pinned {
				state += ", pinned (a change needs -force -reason)"
			}
		}
		fmt.Fprintf(stdout, "  %-28s %s (%s)\n", t.key, t.file, state)
	}
}

// recordAll records every selected cassette into a staging folder and
// applies them together; on any failure nothing changes in f.dir.
func (cfg config) recordAll(ctx context.Context, f *flags, manifest *cassettes.Manifest, stdout io.Writer) ([]*cassettes.Change, error) {
	if err := cassettes.Recover(f.dir); err != nil {
		return nil, err
	}
	stage, err := cassettes.NewStage(f.dir)
	if err != nil {
		return nil, err
	}
	defer cassettes.Recover(f.dir) // discards the staging folder if nothing was applied
	rt := cfg.transport
	if def, _ := url.Parse(llm.DefaultAnthropicBaseURL); *f.base != *def {
		if rt, err = cassettes.Redirect(def.String(), f.base.String(), rt); err != nil {
			return nil, usagef("-base-url: %v", err)
		}
	}
	var updates []cassettes.Update
	var changes []*cassettes.Change
	for i, t := range f.selected {
		fmt.Fprintf(stdout, "refresh-cassettes: [%d/%d] %s: recording %s\n", i+1, len(f.selected), t.key, t.file)
		staged := filepath.Join(stage, t.file)
		if err := cfg.record(ctx, t, staged, rt, stdout); err != nil {
			return nil, fmt.Errorf("%s: %w\nnothing was changed in %s", t.key, err, f.dir)
		}
		ch, err := cassettes.Compare(filepath.Join(f.dir, t.file), staged)
		if err != nil {
			return nil, err
		}
		state := "new"
		switch {
		case ch.OldDigest == ch.NewDigest:
			state = "unchanged"
		case ch.OldDigest != "":
			state = "changed"
		}
		fmt.Fprintf(stdout, "refresh-cassettes: [%d/%d] %s: recorded %d interactions (%s)\n", i+1, len(f.selected), t.key, ch.NewInteractions, state)
		if e, ok := manifest.Lookup(t.file); ok && e.Pinned && e.Digest != ch.NewDigest && !f.force {
			return nil, fmt.Errorf("%s: %w: %s changed (digest %s -> %s) and a golden digest depends on it; re-run with -force -reason 'why'\nnothing was changed in %s",
				t.key, cassettes.ErrPinned, t.file, e.Digest, ch.NewDigest, f.dir)
		}
		updates = append(updates, cassettes.Update{File: t.file, Staged: staged, Force: f.force, Reason: f.reason})
		changes = append(changes, ch)
	}
	if _, err := cassettes.Apply(f.dir, updates, cfg.now().UTC().Format(time.RFC3339)); err != nil {
		return nil, fmt.Errorf("%w\nnothing was changed in %s", err, f.dir)
	}
	return changes, nil
}

func summary(stdout io.Writer, f *flags, changes []*cassettes.Change) {
	changed := 0
	fmt.Fprintln(stdout, "refresh-cassettes: summary:")
	for i, ch := range changes {
		t := f.selected[i]
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
			changed, f.dir, cassettes.ManifestName)
	} else {
		fmt.Fprintln(stdout, "refresh-cassettes: no cassette changed; the goldens stay valid.")
	}
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
