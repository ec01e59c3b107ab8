package cmdtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/codegenie/codegenie/bundle"
	"github.com/codegenie/codegenie/events"
)

// TestScripts runs testdata/script/*.txtar: one script per command, its
// usage, exit statuses, main outputs and error paths. Besides testscript's
// own commands, a script has:
//
//	status N PROG ARGS...   run PROG like exec and require exit status N
//	mkbundle OUT RUN=TEXT...   write a bundle (a single file when OUT ends
//	                           in .zst) of one run per RUN=TEXT: a tape of
//	                           three events, the output TEXT, pin model=TEXT
func TestScripts(t *testing.T) {
	needCommands(t)
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("CODEGENIE_LEDGER", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":   cmdStatus,
			"mkbundle": cmdMkbundle,
		},
	})
}

func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		got = exit.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

func cmdMkbundle(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mkbundle OUT RUN=TEXT...")
	}
	b := &bundle.Bundle{Metadata: bundle.Metadata{Scenario: "lodash", ToolVersion: "v1", GoVersion: "go1.26.0"}}
	for _, spec := range args[1:] {
		id, text, ok := strings.Cut(spec, "=")
		if !ok {
			ts.Fatalf("mkbundle: %q is not RUN=TEXT", spec)
		}
		rec := events.NewRecorder(events.Config{})
		for _, step := range []struct {
			kind    events.Kind
			payload any
		}{{"prompt.built", map[string]string{"user": "bump lodash"}}, {"llm.responded", map[string]string{"text": text}}, {"transform.produced", map[string]string{"diff": text}}} {
			_, err := rec.Emit(step.kind, step.payload)
			ts.Check(err)
		}
		b.Runs = append(b.Runs, bundle.Run{ID: id, Pin: map[string]string{"model": text}, Output: []byte(text + "\n"), Events: rec.Events()})
	}
	out := ts.MkAbs(args[0])
	if strings.HasSuffix(out, ".zst") {
		ts.Check(bundle.Config{}.WriteFile(context.Background(), out, b))
	} else {
		ts.Check(bundle.Config{}.Write(context.Background(), out, b))
	}
}
