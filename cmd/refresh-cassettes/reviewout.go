package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/codegenie/codegenie/cassettes/review"
	"github.com/codegenie/codegenie/internal/atomicfile"
)

// writeReview reviews the staged cassettes against those in the
// directory, writes review.md and review.json into the review directory
// and prints the Markdown.
func (cfg config) writeReview(ctx context.Context, o *options, stage string, recs []recorded, stdout io.Writer) (*review.Review, error) {
	rc := review.Config{GoldenCommand: o.goldenCmd, APIKey: cfg.apiKey}
	if o.prices != "" {
		p, err := review.ReadPrices(o.prices)
		if err != nil {
			return nil, err
		}
		rc.Prices = p
	}
	if _, err := os.Stat(o.goldens); err == nil {
		rc.Goldens = []string{o.goldens}
	} else if !errors.Is(err, fs.ErrNotExist) || o.goldens != defaultGoldens {
		return nil, fmt.Errorf("-goldens %s: %w", o.goldens, err)
	}
	files := make([]string, len(recs))
	for i, r := range recs {
		files[i] = r.t.file
	}
	rev, err := rc.Files(ctx, o.dir, stage, files)
	if err != nil {
		return nil, err
	}
	dir, err := cfg.reviewDir(o)
	if err != nil {
		return nil, err
	}
	var md, js bytes.Buffer
	if err := rev.Markdown(&md); err != nil {
		return nil, err
	}
	if err := rev.WriteJSON(&js); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"review.md", md.Bytes()}, {"review.json", js.Bytes()}} {
		if err := atomicfile.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(stdout, "refresh-cassettes: review (also in %s and %s):\n\n%s\n",
		filepath.Join(dir, "review.md"), filepath.Join(dir, "review.json"), md.String())
	o.reviewDir = dir
	return rev, nil
}

// reviewDir is -review (created if missing), or a new directory under
// cfg.reviewRoot.
func (cfg config) reviewDir(o *options) (string, error) {
	if o.reviewDir != "" {
		return o.reviewDir, os.MkdirAll(o.reviewDir, 0o755)
	}
	root := cfg.reviewRoot
	if root == "" {
		root = os.TempDir() //detvet:ignore the default parent of a new temporary review directory, whose path is printed for the user
	}
	return os.MkdirTemp(root, "refresh-review-")
}
