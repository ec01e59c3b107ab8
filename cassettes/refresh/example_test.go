package refresh_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/codegenie/codegenie/cassettes/refresh"
)

// A refresh of every cassette the module's tests open, end to end: what
// cmd/refresh-cassettes does. (Not run here: it builds and runs the
// module's tests.)
func Example() {
	ctx := context.Background()
	cfg := refresh.Config{Log: os.Stderr}
	found, err := cfg.Find(ctx)
	if err != nil || len(found) == 0 {
		log.Fatal(err)
	}
	staged, err := cfg.Record(ctx, found)
	if err != nil {
		log.Fatal(err)
	}
	defer staged.Close()
	rev, err := staged.Review(ctx)
	if err != nil {
		log.Fatal(err)
	}
	rev.Markdown(os.Stdout)
	if err := staged.Parity(ctx); err != nil {
		log.Fatal(err)
	}
	applied, err := staged.Apply(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("applied:", applied)
}

// record finds and records the cassettes cfg selects.
func record(ctx context.Context, cfg refresh.Config) *refresh.Staged {
	found, err := cfg.Find(ctx)
	if err != nil || len(found) == 0 {
		log.Fatal(err)
	}
	staged, err := cfg.Record(ctx, found)
	if err != nil {
		log.Fatal(err)
	}
	return staged
}

// Find lists the cassettes, the tests that record them and the hosts
// they call, changing nothing: a dry run. Here, the cassettes of one
// package's tests whose names start with TestReview.
func ExampleConfig_Find() {
	cfg := refresh.Config{Packages: []string{"./review"}, Run: "^TestReview"}
	found, err := cfg.Find(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range found {
		fmt.Println(c.Path, "recorded by", c.Package, c.Test, "calling", strings.Join(c.Hosts, ", "))
	}
}

// Record re-records the selected cassettes into a staging directory,
// through their tests: here only those past their maximum age.
func ExampleConfig_Record() {
	staged := record(context.Background(), refresh.Config{Expired: true})
	defer staged.Close()
	for _, c := range staged.Cassettes {
		fmt.Println(filepath.Join(staged.Dir, filepath.FromSlash(c.Path)))
	}
}

// Review writes what a pull request shows: a scheduled job that records
// and reviews, and applies nothing.
func ExampleStaged_Review() {
	ctx := context.Background()
	staged := record(ctx, refresh.Config{})
	defer staged.Close()
	rev, err := staged.Review(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if rev.Drifted {
		rev.Markdown(os.Stdout)
	}
}

// Parity replays the staged cassettes through the tests that recorded
// them, which must pass.
func ExampleStaged_Parity() {
	ctx := context.Background()
	staged := record(ctx, refresh.Config{})
	defer staged.Close()
	if err := staged.Parity(ctx); err != nil {
		log.Fatal(err)
	}
}

// Close ends a refresh that applies nothing: the staging directory is
// removed and the locks released; the module is as it was.
func ExampleStaged_Close() {
	staged := record(context.Background(), refresh.Config{})
	fmt.Println(len(staged.Cassettes), "cassettes re-recorded into", staged.Dir)
	if err := staged.Close(); err != nil {
		log.Fatal(err)
	}
}

// Apply moves in what changed, here replacing pinned cassettes with a
// reason the manifest history keeps.
func ExampleStaged_Apply() {
	ctx := context.Background()
	staged := record(ctx, refresh.Config{Cassettes: []string{"review/testdata/..."}, Force: true, Reason: "the model answers in another form"})
	defer staged.Close()
	if err := staged.Parity(ctx); err != nil {
		log.Fatal(err)
	}
	applied, err := staged.Apply(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(applied), "cassettes applied")
}

// Recover finishes or discards what a killed refresh left in a cassette
// directory, and verifies it.
func ExampleConfig_Recover() {
	dir, err := os.MkdirTemp("", "cassettes-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var said strings.Builder
	err = refresh.Config{Log: &said}.Recover(context.Background(), dir)
	fmt.Println(err)
	fmt.Print(strings.ReplaceAll(said.String(), dir, "DIR"))
	// Output:
	// <nil>
	// refresh: DIR: no refresh is left unfinished; it has no manifest to verify
}
