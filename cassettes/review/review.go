package review

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/codegenie/codegenie/cassettes"
	"github.com/codegenie/codegenie/internal/excerpt"
)

// reviewFormat is the format name of a review's JSON form.
const reviewFormat = "codegenie-cassette-review/1"

// Defaults for a zero Config.
const (
	// defaultMaxMarkdown bounds the Markdown form, in bytes: it fits a
	// GitHub pull-request comment (65536 characters) with room to spare.
	defaultMaxMarkdown = 60000
	// defaultMaxText bounds each folded text and tool-call argument kept in
	// the review, in bytes.
	defaultMaxText = 16 << 10
)

// Config configures a review. The zero value uses the built-in prices,
// looks for no golden files and names no refresh command.
type Config struct {
	// Prices is the price table for the cost delta; nil means
	// DefaultPrices().
	Prices *Prices
	// Goldens are directories of files that pin cassette digests (golden
	// digests, lock files): a file under one of them whose text holds the
	// digest of a cassette the refresh changes will move.
	Goldens []string
	// GoldenCommand is the one command that refreshes those files,
	// printed with them. Empty prints none.
	GoldenCommand string
	// MaxMarkdown bounds the Markdown form in bytes; 0 means
	// 60000, under GitHub's comment limit.
	MaxMarkdown int
	// MaxText bounds each text and tool-call argument kept in the review;
	// 0 means 16 KiB. Diffs are computed on the whole texts.
	MaxText int
	// APIKey is the key the cassettes were recorded with (as in
	// cassettes.Config): masked wherever it would appear in the review,
	// as written or escaped, besides every secret the cassettes package's
	// rules find.
	APIKey string
}

// Drift classes an interaction falls into, from the least to the most
// severe: a cassette's class is its most severe interaction's.
type Class string

const (
	Unchanged Class = "unchanged" // the same request and response
	// timingChange: the same request and response, recorded with other
	// timing (a duration or frame offsets beyond the noise a re-record
	// keeps out of the file).
	timingChange Class = "timing"
	Content      Class = "content" // same shape, other values (text, ids, counts)
	New          Class = "new"     // a request the old cassette did not have
	Removed      Class = "removed" // a request the new cassette no longer has
	Schema       Class = "schema"  // a field added or removed, or of another type, in the request or response
	Error        Class = "error"   // the status or the error type changed
)

var severity = []Class{Unchanged, timingChange, Content, New, Removed, Schema, Error}

func worse(a, b Class) Class {
	if slices.Index(severity, b) > slices.Index(severity, a) {
		return b
	}
	return a
}

// Review is the review of one refresh: every re-recorded cassette against
// the one it replaces. Markdown and JSON render it.
type Review struct {
	Format    string     `json:"format"`
	Cassettes []Cassette `json:"cassettes"`
	// Counts counts interactions by drift class over every cassette.
	Counts map[Class]int `json:"counts"`
	// Drifted says some interaction is not Unchanged.
	Drifted bool `json:"drifted"`
	// Before and After are the token usage of every reviewed cassette,
	// Cost what they cost at Prices.
	Before   Usage  `json:"usage_before"`
	After    Usage  `json:"usage_after"`
	Cost     Cost   `json:"cost"`
	Prices   string `json:"prices"`
	Currency string `json:"currency"`
	// Goldens lists the files that will move, and the command that
	// refreshes them.
	Goldens []Golden `json:"goldens,omitempty"`
	// GoldenCommand is Config.GoldenCommand.
	GoldenCommand string `json:"golden_command,omitempty"`

	maxMarkdown int
}

// Cost is a cost before and after, and the difference, in micro-units of
// the review's currency. Unpriced lists models the price table lacks
// (counted as zero); Unconfirmed the models priced by an entry the table
// marks unconfirmed (not checked against the provider's published
// pricing page).
type Cost struct {
	Before      int64    `json:"before_micro"`
	After       int64    `json:"after_micro"`
	Delta       int64    `json:"delta_micro"`
	Unpriced    []string `json:"unpriced,omitempty"`
	Unconfirmed []string `json:"unconfirmed,omitempty"`
}

func (c *Cost) add(d Cost) {
	c.Before = addSat(c.Before, d.Before)
	c.After = addSat(c.After, d.After)
	c.Delta = c.After - c.Before
	c.Unpriced = union(c.Unpriced, d.Unpriced)
	c.Unconfirmed = union(c.Unconfirmed, d.Unconfirmed)
}

// union is the strings of a and b, sorted, each once.
func union(a, b []string) []string {
	a = append(a, b...)
	slices.Sort(a)
	return slices.Compact(a)
}

// Cassette is the review of one cassette file.
type Cassette struct {
	// File is the cassette's name in the directory.
	File string `json:"file"`
	// OldDigest is "" for a new cassette.
	OldDigest string `json:"old_digest,omitempty"`
	NewDigest string `json:"new_digest"`
	// Drift is the most severe class of its interactions.
	Drift        Class         `json:"drift"`
	Interactions []Interaction `json:"interactions"`
	Before       Usage         `json:"usage_before"`
	After        Usage         `json:"usage_after"`
	Cost         Cost          `json:"cost"`
}

// Interaction is one interaction of the old cassette paired with one of
// the new: by equal request keys in file order first, then, among the
// rest, by method and URL and the fewest differing request fields.
type Interaction struct {
	// Old and New are the 0-based positions in the old and new file (-1
	// when absent); OldLine and NewLine their lines.
	Old     int `json:"old"`
	New     int `json:"new"`
	OldLine int `json:"old_line,omitempty"`
	NewLine int `json:"new_line,omitempty"`

	Method string `json:"method"`
	URL    string `json:"url"`
	// Change is "added", "removed", "changed" or "unchanged".
	Change string `json:"change"`
	Drift  Class  `json:"drift"`
	// Why lists the facts behind Drift: the status or error type that
	// changed, each field of the schema that changed.
	Why []string `json:"why,omitempty"`
	// RequestDiff is the field-level diff of the request bodies
	// (internal/jsondiff lines; for bodies that are not JSON, one line).
	RequestDiff []string `json:"request_diff,omitempty"`
	// Before and After are the folded responses (nil when absent).
	Before *Message `json:"before,omitempty"`
	After  *Message `json:"after,omitempty"`
	// TextDiff is the word-level diff of the texts.
	TextDiff []Span `json:"text_diff,omitempty"`
	Cost     Cost   `json:"cost"`
}

// Golden is a file that pins a cassette the refresh changes.
type Golden struct {
	Path      string   `json:"path"`
	Cassettes []string `json:"cassettes"`
}

// Compare reviews with the zero Config.
func Compare(ctx context.Context, dir, stage string) (*Review, error) {
	return Config{}.Compare(ctx, dir, stage)
}

// Compare reviews every cassette (*.yaml) in stage against the cassette
// of the same name in dir (absent: a new cassette).
func (c Config) Compare(ctx context.Context, dir, stage string) (*Review, error) {
	files, err := filepath.Glob(filepath.Join(stage, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("review: no cassettes (*.yaml) in %s", stage)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	return c.Files(ctx, dir, stage, names)
}

// Files reviews the named cassettes of stage against those of the same
// names in dir.
func (c Config) Files(ctx context.Context, dir, stage string, names []string) (*Review, error) {
	prices := c.Prices
	if prices == nil {
		prices = DefaultPrices()
	}
	r := &Review{Format: reviewFormat, Counts: map[Class]int{}, Prices: prices.Source, Currency: prices.Currency,
		GoldenCommand: c.GoldenCommand, maxMarkdown: c.MaxMarkdown}
	for _, cl := range severity {
		r.Counts[cl] = 0
	}
	if r.maxMarkdown <= 0 {
		r.maxMarkdown = defaultMaxMarkdown
	}
	maxText := c.MaxText
	if maxText <= 0 {
		maxText = defaultMaxText
	}
	names = slices.Sorted(slices.Values(names))
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cr, err := reviewCassette(filepath.Join(dir, name), filepath.Join(stage, name), prices, maxText, masker{c.APIKey})
		if err != nil {
			return nil, err
		}
		cr.File = name
		r.Cassettes = append(r.Cassettes, *cr)
		for _, in := range cr.Interactions {
			r.Counts[in.Drift]++
		}
		r.Before, r.After = r.Before.add(cr.Before), r.After.add(cr.After)
		r.Cost.add(cr.Cost)
	}
	r.Drifted = sum(r.Counts) > r.Counts[Unchanged]
	goldens, err := findGoldens(ctx, c.Goldens, r.Cassettes)
	if err != nil {
		return nil, err
	}
	r.Goldens = goldens
	return r, nil
}

func sum(m map[Class]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// reviewCassette reviews the cassette at newPath against oldPath (which
// may not exist).
func reviewCassette(oldPath, newPath string, prices *Prices, maxText int, mk masker) (*Cassette, error) {
	newRecs, err := cassettes.ReadRecorded(newPath)
	if err != nil {
		return nil, err
	}
	cr := &Cassette{Drift: Unchanged}
	if cr.NewDigest, err = cassettes.Digest(newPath); err != nil {
		return nil, err
	}
	var oldRecs []cassettes.Recorded
	switch _, err := os.Stat(oldPath); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if oldRecs, err = cassettes.ReadRecorded(oldPath); err != nil {
			return nil, err
		}
		if cr.OldDigest, err = cassettes.Digest(oldPath); err != nil {
			return nil, err
		}
	}
	for _, p := range pairUp(oldRecs, newRecs) {
		var o, n *cassettes.Recorded
		if p.old >= 0 {
			o = &oldRecs[p.old]
		}
		if p.new >= 0 {
			n = &newRecs[p.new]
		}
		in := compareInteraction(o, n, prices, maxText, mk)
		in.Old, in.New = p.old, p.new
		cr.Interactions = append(cr.Interactions, in)
		cr.Drift = worse(cr.Drift, in.Drift)
		if in.Before != nil {
			cr.Before = cr.Before.add(in.Before.Usage)
		}
		if in.After != nil {
			cr.After = cr.After.add(in.After.Usage)
		}
		cr.Cost.add(in.Cost)
	}
	if cr.OldDigest == "" && len(cr.Interactions) == 0 {
		cr.Drift = New
	}
	return cr, nil
}

// label is the one-line name of a cassette's status.
func (c Cassette) label() string {
	switch {
	case c.OldDigest == "":
		return "new"
	case c.OldDigest == c.NewDigest:
		return "unchanged"
	}
	return "changed"
}

// keepText cuts s to n bytes at a rune boundary.
func keepText(s string, n int) (string, bool) {
	h := excerpt.Head(s, n)
	return h, len(h) < len(s)
}
